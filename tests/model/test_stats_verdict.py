"""GPU attribution, the op and kernel tables, and the verdict, on traces with known answers."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from tui.model.analysis.kernels import kernel_stats
from tui.model.analysis.ops import UNLAUNCHED, op_stats
from tui.model.analysis.scope import Scope
from tui.model.analysis.summary import summarize
from tui.model.analysis.verdict import judge
from tui.model.analysis.verdict_rules import BUSY_HIGH, BUSY_LOW
from tui.model.ingest import load_trace
from tui.model.present.tables import scope_report

US = 1000


@pytest.fixture(scope="module")
def att():
    return load_trace(DATA / "attribution.json")


def _ops(trace, scope=None):
    return {o.name: o for o in op_stats(trace, scope)}


def test_gpu_time_goes_to_the_op_enclosing_the_launch(att):
    ops = _ops(att)
    assert (ops["inner"].self_cuda_ns, ops["inner"].cuda_total_ns) == (10 * US, 10 * US)
    # K2 (driver launch) and K3 (runtime launch) run directly under "outer", which also
    # encloses "inner" and "graph".
    assert (ops["outer"].self_cuda_ns, ops["outer"].cuda_total_ns) == (30 * US, 49 * US)
    assert (ops["graph"].self_cuda_ns, ops["graph"].cuda_total_ns) == (9 * US, 9 * US)
    assert ops["cudaLaunchKernel"].self_cuda_ns == 0  # the launch call itself is not charged
    assert (ops[UNLAUNCHED].calls, ops[UNLAUNCHED].self_cuda_ns) == (1, 2 * US)
    total_gpu = (10 + 20 + 10 + 5 + 4 + 2) * US
    assert sum(o.self_cuda_ns for o in ops.values()) == total_gpu


def test_a_subtree_is_summarised_over_its_span_with_the_gpu_work_it_launched(att):
    inner = next(i for i in range(len(att.slices)) if att.slice_name(i) == "inner")
    summary = scope_report(att, Scope(root=inner)).summary
    assert summary.window == (10 * US, 40 * US)
    evidence = summary.verdict.evidence
    assert (evidence.gpu_busy_ns, evidence.launches, evidence.wall_ns) == (10 * US, 1, 30 * US)
    outer = next(i for i in range(len(att.slices)) if att.slice_name(i) == "outer")
    evidence = scope_report(att, Scope(root=outer)).summary.verdict.evidence
    assert (evidence.gpu_busy_ns, evidence.launches) == ((10 + 20 + 5 + 4 + 2) * US, 4)


def test_cpu_columns_and_scopes(att):
    ops = _ops(att)
    # 100 us less inner (30), the two launches directly in it (2 + 1) and graph (10).
    assert (ops["outer"].self_cpu_ns, ops["outer"].cpu_total_ns) == (57 * US, 100 * US)
    assert ops["cudaLaunchKernel"].calls == 2
    in_view = _ops(att, Scope(45 * US, 100 * US))
    assert set(in_view) == {
        "cuLaunchKernel",
        "cudaLaunchKernel",
        "graph",
        "cudaGraphLaunch",
        "[graph #1] cudaGraphLaunch: 2 kernels",  # its replay, outside torch's rows
        UNLAUNCHED,
    }  # the orphan kernel starts at 96 us
    outer_row = next(r for r in range(len(att.slices)) if att.slice_name(r) == "inner")
    under = _ops(att, Scope(root=outer_row))
    assert set(under) == {"inner", "cudaLaunchKernel"}
    assert under["inner"].cuda_total_ns == 10 * US


def test_children_overlapping_each_other_both_count_as_in_torch(tmp_path):
    """torch's tree takes every op wholly inside another as its child, even when two children
    overlap each other: the parent's Self CPU then goes negative, and so does ours."""
    path = tmp_path / "overlap.json"
    ops = [("parent", 0, 20), ("a", 0, 10), ("b", 5, 13)]  # a and b overlap by 5 us
    events = [
        {"ph": "X", "cat": "cpu_op", "name": n, "pid": 1, "tid": 1, "ts": ts, "dur": d}
        for n, ts, d in ops
    ]
    path.write_text(json.dumps({"traceEvents": events}))
    ops = _ops(load_trace(path))
    assert (ops["parent"].self_cpu_ns, ops["parent"].cpu_total_ns) == (-3 * US, 20 * US)
    assert (ops["a"].self_cpu_ns, ops["b"].self_cpu_ns) == (10 * US, 13 * US)


def test_kernel_table(att):
    kernels = {k.name: k for k in kernel_stats(att)}
    assert list(kernels) == ["K2", "K1", "K3", "G", "orphan"]
    g = kernels["G"]
    assert (g.calls, g.total_ns, g.min_ns, g.max_ns, g.avg_ns) == (
        2,
        9 * US,
        4 * US,
        5 * US,
        4.5 * US,
    )
    assert kernels["K2"].share == pytest.approx(20 / 51)
    assert kernels["K1"].geometry == {"grid": "4x1x1", "block": "128x1x1", "registers": "32"}


def test_summary_busy_is_the_union_of_gpu_work(att):
    summary = summarize(att)
    e = summary.verdict.evidence
    # No steps: judged over the GPU's span, from its first work to the end of its last; the
    # CPU-only time around it is reported apart.
    assert summary.window == (20 * US, 98 * US) and summary.cpu_only_ns == (20 * US, 2 * US)
    assert e.gpu_busy_ns == 41 * US  # K3 overlaps K2 on another stream
    assert scope_report(att).totals.self_cuda_ns == 51 * US
    assert e.launches == 4
    assert summary.median_launch_delay_ns == 5 * US  # 8, 5, 4, 4 and 10 us


def _trace(tmp_path, kernels_us, launch_us, gap_us, steps=3, cpu_only=False):
    events, t, corr = [], 0.0, 1
    for step in range(steps):
        start = t
        for _ in range(4):
            if not cpu_only:
                events.append(
                    {
                        "ph": "X",
                        "cat": "cuda_runtime",
                        "name": "cudaLaunchKernel",
                        "pid": 1,
                        "tid": 1,
                        "ts": t,
                        "dur": launch_us,
                        "args": {"correlation": corr},
                    }
                )
                events.append(
                    {
                        "ph": "X",
                        "cat": "kernel",
                        "name": "k",
                        "pid": 0,
                        "tid": 7,
                        "ts": t + launch_us,
                        "dur": kernels_us,
                        "args": {"correlation": corr},
                    }
                )
            else:
                events.append(
                    {
                        "ph": "X",
                        "cat": "cpu_op",
                        "name": "aten::mm",
                        "pid": 1,
                        "tid": 1,
                        "ts": t,
                        "dur": launch_us,
                    }
                )
            corr += 1
            t += max(launch_us, kernels_us) + gap_us
        events.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{step}",
                "pid": 1,
                "tid": 1,
                "ts": start,
                "dur": t - start,
            }
        )
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    return load_trace(path)


def test_verdicts(tmp_path):
    tiny = summarize(_trace(tmp_path, kernels_us=2, launch_us=30, gap_us=10))
    assert tiny.verdict.label == "overhead-bound"
    assert tiny.verdict.evidence.gpu_busy < BUSY_LOW
    assert [s.verdict.label for s in tiny.steps] == ["overhead-bound"] * 3
    big = summarize(_trace(tmp_path, kernels_us=4000, launch_us=10, gap_us=1))
    assert big.verdict.label == "compute-bound" and big.verdict.evidence.gpu_busy >= BUSY_HIGH
    middle = summarize(_trace(tmp_path, kernels_us=50, launch_us=5, gap_us=45))
    assert middle.verdict.label == "mixed"
    cpu = summarize(_trace(tmp_path, kernels_us=0, launch_us=30, gap_us=5, cpu_only=True))
    assert cpu.verdict.label == "no GPU activity"
    assert "GPU busy" in tiny.verdict.reason and "launch calls took" in tiny.verdict.reason


def test_judge_counts_only_the_window(att):
    v = judge(att, 80 * US, 100 * US)
    assert v.evidence.launches == 1 and v.evidence.launched_gpu_ns == 9 * US


def test_a_launch_flow_binds_to_the_call_with_its_correlation():
    """The flow starts in the same microsecond as a zero-length cudaFuncSetAttribute, which
    sorts after the launch and so holds the flow's time: its id says which call it is."""
    trace = load_trace(DATA / "launch_beside_setattr.json")
    (src,) = trace.launches.src.tolist()
    assert trace.slice_name(src) == "cudaLaunchKernel"
    ops = {o.name: o for o in op_stats(trace)}
    assert ops["aten::mm"].self_cuda_ns == 8 * US
    assert ops["cudaFuncSetAttribute"].cuda_total_ns == 0


def test_a_pipelined_step_is_measured_by_the_work_it_launched():
    """Step 1 [20, 120) launches K1, which runs [110, 200), into step 2's CPU span; step 2
    [120, 220) launches K2, running [200, 280), past the last step. K0 runs before any step."""
    trace = load_trace(DATA / "pipelined_steps.json")
    summary = summarize(trace)
    assert summary.window == (0, 280 * US)  # the steps, widened to hold all GPU work
    assert summary.verdict.evidence.gpu_busy_ns == 180 * US
    one, two = summary.steps
    assert (one.dur_ns, one.verdict.evidence.launched_gpu_ns) == (100 * US, 90 * US)
    # Each over its own GPU span, counting its own work: step 1 [20, 200) waits 90 us for its
    # kernel; step 2's span starts when step 1's kernel is done, [200, 280), all its own work.
    assert (one.verdict.evidence.wall_ns, one.verdict.evidence.gpu_busy_ns) == (180 * US, 90 * US)
    assert two.verdict.window == (200 * US, 280 * US)
    assert (two.verdict.evidence.wall_ns, two.verdict.evidence.gpu_busy_ns) == (80 * US, 80 * US)
    assert two.verdict.label == "compute-bound"
    assert (one.overlap_ns, two.overlap_ns) == (0, 0)  # the spans tile: no neighbour counted
    report = scope_report(trace)
    assert report.totals.self_cuda_ns == 180 * US  # K0 in the unlaunched row
    kernels = scope_report(trace, kernels=True)
    assert kernels.totals.gpu_ns == 180 * US


def test_steps_whose_gpu_spans_overlap_count_only_their_own_work(tmp_path):
    """Step 1 [0, 100) launches K1 on stream 7, [10, 150); step 2 [100, 200) launches K2 on
    stream 8, [120, 180), while K1 still runs: their spans overlap by 30 us."""
    from tests.tui.helpers import run

    def x(name, cat, ts, dur, tid=1, pid=1, **args):
        return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
                "args": args}  # fmt: skip

    events = [
        x("ProfilerStep#1", "user_annotation", 0, 100),
        x("cudaLaunchKernel", "cuda_runtime", 5, 2, correlation=1),
        x("k1", "kernel", 10, 140, pid=0, tid=7, correlation=1),
        x("ProfilerStep#2", "user_annotation", 100, 100),
        x("cudaLaunchKernel", "cuda_runtime", 110, 2, correlation=2),
        x("k2", "kernel", 120, 60, pid=0, tid=8, correlation=2),
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    one, two = summarize(load_trace(path)).steps
    assert one.verdict.window == (0, 150 * US) and two.verdict.window == (120 * US, 200 * US)
    assert (two.verdict.evidence.wall_ns, two.verdict.evidence.gpu_busy_ns) == (80 * US, 60 * US)
    assert (one.overlap_ns, two.overlap_ns) == (30 * US, 0)
    text = run("summary", str(path)).stdout
    assert (
        "GPU spans overlap: 1 step shares 30 us with the next step's (pipelined); each step's"
        " GPU busy counts only the work it launched"
    ) in text
    doc = json.loads(run("summary", str(path), "--format", "json").stdout)
    assert [(s["gpu_start_ns"], s["overlap_next_ns"]) for s in doc["steps"]] == [
        (0, 30 * US),
        (120 * US, 0),
    ]


def test_communication_bound_when_peers_keep_the_gpu_waiting():
    """Compute [0, 30) us, an all-reduce [20, 90): 90 us busy of 100, 60 us of it exposed."""
    trace = load_trace(DATA / "comm_bound.json")
    verdict = judge(trace, 0, 100 * US)
    e = verdict.evidence
    assert (e.gpu_busy_ns, e.comm_ns, e.exposed_comm_ns) == (90 * US, 70 * US, 60 * US)
    assert verdict.label == "communication-bound"
    assert "waits on its peers" in verdict.reason and "bottleneck" not in verdict.reason


def test_data_loading_bound_names_the_dataloader():
    """The GPU is idle [10, 85) us; the DataLoader call [10, 80) covers 70 of those 75 us. The
    trace is one step, [0, 100), so its summary is the step's verdict."""
    trace = load_trace(DATA / "dataloader_bound.json")
    summary = summarize(trace)
    e = summary.verdict.evidence
    assert summary.verdict.window == (0, 100 * US)
    assert e.idle_ns == 83 * US  # [0, 3), [10, 85) and [95, 100)
    assert e.dataloader_idle_ns == 70 * US
    assert summary.verdict.label == "data-loading-bound"
    assert summary.steps[0].verdict.label == "data-loading-bound"
    # Its own frames (`enumerate(DataLoader)#...`) are the DataLoader: named once, as that.
    assert not [n for n, _ in e.covers if "DataLoader" in n]
    assert "DataLoader 84%" in summary.verdict.reason
    assert summary.verdict.reason.split("the CPU is in: ")[1].count("DataLoader") == 1
    assert sum(summary.idle_ns.values()) == e.idle_ns  # the headline adds up to the same


def test_sync_bound_when_a_sync_covers_the_idle_time():
    trace = load_trace(DATA / "sync_bound.json")
    summary = summarize(trace)
    e = summary.verdict.evidence
    assert e.idle_ns == 82 * US  # [0, 2), [10, 80), [90, 100)
    assert e.sync_idle_ns == 65 * US  # the sync [5, 75) over the idle [10, 80)
    assert summary.verdict.label == "sync-bound"


def test_a_window_where_no_op_runs_has_a_verdict():
    """Found by the key fuzzer: a marked range over GPU work alone (no CPU op in it) failed
    while naming what the CPU does during the GPU's idle time."""
    from tui.model.analysis.summary import summarize
    from tui.model.ingest import load_trace

    trace = load_trace(DATA / "gpu_streams.json")
    summary = summarize(trace, (76 * US, 92 * US))  # graph kernels and a copy; no CPU op
    assert summary.verdict.evidence.covers == ()
    # Busy 10 of its 16 us (graph kernels [80, 84) and [85, 89), the copy [90, 92)): neither
    # bound by compute nor starved by cheap launches.
    assert summary.verdict.label == "mixed" and summary.verdict.evidence.gpu_busy == 0.625


def test_the_verdict_names_a_call_chain_once(tmp_path):
    """The GPU idles [10, 90) us. Three Python frames down one call chain cover 66-70 us of it,
    the inner ones inside the outer's: the verdict names the outermost once; `aten::item`
    [82, 90), idle time the chain does not cover, is named too."""
    cpu = {"ph": "X", "pid": 1, "tid": 1}
    gpu = {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7}
    events = [
        {**cpu, "cat": "user_annotation", "name": "ProfilerStep#0", "ts": 0, "dur": 100},
        {**cpu, "cat": "python_function", "name": "a.py(1): outer", "ts": 10, "dur": 70},
        {**cpu, "cat": "python_function", "name": "b.py(2): inner", "ts": 11, "dur": 68},
        {**cpu, "cat": "python_function", "name": "c.py(3): wait", "ts": 12, "dur": 66},
        {**cpu, "cat": "cpu_op", "name": "aten::item", "ts": 82, "dur": 8},
        {**gpu, "name": "k_first", "ts": 0, "dur": 10},
        {**gpu, "name": "k_last", "ts": 90, "dur": 10},
    ]
    path = tmp_path / "chain.json"
    path.write_text(json.dumps({"traceEvents": events}))
    e = summarize(load_trace(path)).verdict.evidence
    assert [n for n, _ in e.covers] == ["a.py(1): outer", "aten::item"]


def test_with_no_launch_calls_the_verdict_is_not_overhead_bound(tmp_path):
    """CUPTI's range profiler writes its ranges on the device and no kernels or launches: the
    GPU is 16% busy, but what launching costs is unknown, not 0 ns against 0 ns."""
    from tui.model.analysis.summary import summarize
    from tui.model.ingest import load_trace

    def x(name: str, cat: str, pid: int, ts: int, dur: int) -> dict:
        return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": 7, "ts": ts, "dur": dur}

    events = [
        x("ProfilerStep#1", "user_annotation", 1, 0, 1000),
        x("aten::mm", "cpu_op", 1, 10, 100),
        x("aten::mm", "cpu_op", 1, 500, 100),
        x("range 0", "cuda_profiler_range", 0, 20, 80),
        x("range 1", "cuda_profiler_range", 0, 510, 80),
    ]
    path = tmp_path / "ranges.json"
    path.write_text(json.dumps({"traceEvents": events}))
    verdict = summarize(load_trace(path)).verdict
    assert verdict.evidence.gpu_busy == pytest.approx(0.16) and verdict.evidence.launches == 0
    assert verdict.label == "mixed"
    assert "launch calls took" not in verdict.reason and "0 pieces" not in verdict.reason
    assert verdict.reason.endswith(
        "no launch calls in this window, so what launching costs is not known"
    )
