"""Where a verdict looks: a trace without steps is judged over the GPU's span (TraceLens's
window), a blocking copy while the GPU runs nothing is a copy and not a sync, and a truncated
trace says so wherever its verdict is shown."""

from __future__ import annotations

import json

from tests.tui.helpers import run
from tui.model.analysis.summary import summarize
from tui.model.ingest import load_trace

US = 1000


def _x(name, cat, ts, dur, tid=1, pid=1, **args):
    event = {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    return event | {"args": args}


def _launch(ts, corr, kernel, start, dur, name="cudaLaunchKernel"):
    return [
        _x(name, "cuda_runtime", ts, 2, correlation=corr),
        _x(kernel, "kernel" if "Memcpy" not in kernel else "gpu_memcpy", start, dur, pid=0, tid=7,
           correlation=corr),
    ]  # fmt: skip


def _write(path, events):
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_a_trace_without_steps_is_judged_over_the_gpus_span(tmp_path):
    # 500 us of CPU-only set-up, then 100 us of GPU work (90 busy), then 50 us of CPU.
    events = [_x("setup", "cpu_op", 0, 500), _x("aten::mm", "cpu_op", 500, 10)]
    events += _launch(502, 1, "gemm", 510, 40) + _launch(505, 2, "gemm", 560, 50)
    events.append(_x("teardown", "cpu_op", 560, 100))
    path = _write(tmp_path / "t.json", events)
    summary = summarize(load_trace(path))
    assert summary.window == (510 * US, 610 * US)
    assert summary.cpu_only_ns == (510 * US, 50 * US)
    assert summary.verdict.evidence.gpu_busy_ns == 90 * US
    assert summary.verdict.label == "compute-bound"  # 90% busy: not the 14% of the whole trace
    assert summary.verdict.evidence.launches == 2  # launched before the span, still counted
    text = run("summary", str(path)).stdout
    assert (
        "+510 us to +610 us (no steps: the GPU's first to last work; CPU only 510 us before it,"
        " 50 us after)"
    ) in text
    doc = json.loads(run("summary", str(path), "--format", "json").stdout)
    assert doc["cpu_only_ns"] == {"before": 510 * US, "after": 50 * US}


def test_a_blocking_copy_while_the_gpu_runs_nothing_is_a_copy_not_a_sync(tmp_path):
    # A kernel, then a 400 us hipMemcpyWithStream whose copy runs at its end, with nothing else
    # on the GPU meanwhile; then 10 us of kernels.
    events = _launch(0, 3, "k0", 2, 2)
    events += [_x("aten::copy_", "cpu_op", 3, 402)]
    events += _launch(4, 1, "Memcpy HtoD (Pageable -> Device)", 398, 5, "hipMemcpyWithStream")
    events[3]["dur"] = 400
    events += _launch(410, 2, "k", 412, 10)
    path = _write(tmp_path / "t.json", events)
    verdict = summarize(load_trace(path)).verdict
    assert verdict.label == "copy-bound"
    assert verdict.evidence.sync_idle_ns == 0 and verdict.evidence.copy_idle_ns > 0
    assert "blocking copies while the GPU runs nothing" in verdict.reason


def test_a_blocking_copy_that_waits_for_running_kernels_is_a_sync(tmp_path):
    # The copy waits 300 us for a kernel launched before it: a sync.
    events = _launch(0, 1, "long_kernel", 5, 300)
    events += _launch(10, 2, "Memcpy DtoH (Device -> Pageable)", 306, 5, "cudaMemcpy")
    events[2]["dur"] = 300
    events += [_x("aten::item", "cpu_op", 0, 320), _x("python_work", "cpu_op", 320, 700)]
    events += _launch(1020, 3, "k", 1025, 10)
    verdict = summarize(load_trace(_write(tmp_path / "t.json", events))).verdict
    assert verdict.evidence.copy_idle_ns == 0 and verdict.evidence.sync_idle_ns > 0


def test_a_truncated_trace_says_so_beside_its_verdict(tmp_path):
    events = [_x("aten::mm", "cpu_op", 0, 10), *_launch(2, 1, "gemm", 5, 50)]
    events.append(_x("aten::add", "cpu_op", 60, 10))
    text = json.dumps({"traceEvents": events})
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.rindex('{"ph"') + 30])  # the writer stopped mid-event
    out = run("summary", str(cut)).stdout
    verdict = next(ln for ln in out.splitlines() if ln.startswith("Verdict"))
    assert verdict.endswith("(the trace is truncated: this judges what was read)")
    doc = json.loads(run("summary", str(cut), "--format", "json").stdout)
    assert doc["verdict"]["truncated"] is True
    diff = run("diff", str(cut), str(cut)).stdout
    assert "BASE's trace is truncated" in diff and "NEW's trace is truncated" in diff


def _skewed(tmp_path, skew_us, bursts=5):
    """A step per burst, 300 ms apart; each launches one 10 ms kernel that the GPU's clock puts
    `skew_us` after the launch (the GPU idle at every launch)."""
    events = []
    for k in range(bursts):
        t = k * 300_000
        events.append(_x(f"ProfilerStep#{k}", "user_annotation", t, 1_000))
        events += _launch(t + 10, k + 1, "gemm", t + 10 + skew_us, 10_000)
    return _write(tmp_path / "skewed.json", events)


def test_clocks_that_disagree_are_found_and_the_gpu_is_judged_over_its_own_span(tmp_path):
    from tui.model.analysis.health import health

    path = _skewed(tmp_path, 150_000)
    trace = load_trace(path)
    (found,) = [f for f in health(trace).checks if f.rule == "clock_offset"]
    assert found.count == 5 and "at least 150 ms after its launch" in found.what
    summary = summarize(trace)
    assert summary.clock_offset_ns == 150_000 * US
    assert summary.window == (150_010 * US, 1_360_010 * US)  # first to last GPU work
    assert summary.verdict.evidence.gpu_busy_ns == 50_000 * US
    text = run("summary", str(path)).stdout
    assert "the CPU and GPU clocks disagree, GPU work starting at least 150 ms after" in text
    info = run("info", str(path)).stdout
    assert "the CPU and GPU clocks disagree" in info
    # Every step is kept (they are on the CPU's clock) and judged by its own work on the
    # GPU's: 10 ms each, all busy.
    assert [s.verdict.evidence.wall_ns for s in summary.steps] == [10_000 * US] * 5
    assert summary.cpu_only_ns == (0, 0)  # the lag is not CPU-only time


def test_a_normal_launch_lag_is_no_clock_offset(tmp_path):
    from tui.model.analysis.clock import clock_offset

    assert clock_offset(load_trace(_skewed(tmp_path, 20))) is None
