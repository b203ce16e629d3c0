"""The model on hand-written scenario traces: nesting, lanes, links, pairs, skips."""

from __future__ import annotations

import json

import numpy as np

from tests.conftest import DATA
from tui.model.analysis.memory import counter_series
from tui.model.analysis.ops import op_stats
from tui.model.ingest import load_trace


def _by_name(trace, lane_name):
    lane = next(lane for lane in trace.lanes if lane.name == lane_name)
    rows = range(lane.lo, lane.hi)
    return lane, {trace.slice_name(r): r for r in rows}


def test_nested_cpu_ops_get_depths_and_parents():
    trace = load_trace(DATA / "nested_cpu.json")
    lane, rows = _by_name(trace, "main 11")
    s = trace.slices
    assert lane.slice_count == 7
    assert s.depth[rows["ProfilerStep#1"]] == 0
    linear = [r for r in range(lane.lo, lane.hi) if trace.slice_name(r) == "aten::linear"]
    addmm = [r for r in range(lane.lo, lane.hi) if trace.slice_name(r) == "aten::addmm"]
    assert [int(s.depth[r]) for r in linear] == [1, 1]
    assert [int(s.depth[r]) for r in addmm] == [2, 2]
    assert [int(s.parent[r]) for r in addmm] == linear
    assert lane.levels == 3
    assert trace.slice_name(int(s.parent[rows["aten::add"]])) == "ProfilerStep#1"


def test_times_are_integer_ns_from_the_earliest_event():
    trace = load_trace(DATA / "nested_cpu.json")
    s = trace.slices
    assert s.start.dtype == np.int64
    assert int(s.start.min()) == 0
    _, rows = _by_name(trace, "main 11")
    assert int(s.start[rows["ProfilerStep#2"]]) == 100_000
    assert int(s.dur[rows["ProfilerStep#2"]]) == 60_000
    assert trace.span_ns == 160_000


def test_lanes_follow_process_order_with_gpus_last_and_kineto_names():
    trace = load_trace(DATA / "gpu_streams.json")
    assert [p.name for p in trace.processes] == ["process 7 (python3)", "GPU 0"]
    assert [(lane.name, lane.kind) for lane in trace.lanes] == [
        ("thread 7", "cpu"),
        ("stream 7", "gpu"),
        ("stream 20", "gpu"),
    ]
    assert trace.devices == [{"id": 0, "name": "Test GPU", "totalGlobalMem": 1000}]
    assert trace.base_time_ns == 1_700_000_000_000_000_000 + 10 * 1000


def test_launches_link_by_flow_by_correlation_and_one_to_many():
    trace = load_trace(DATA / "gpu_streams.json")
    pairs = sorted(
        (trace.slice_name(a), trace.slice_name(b))
        for a, b in zip(trace.launches.src, trace.launches.dst, strict=True)
    )
    assert pairs == [
        ("cuLaunchKernel", "triton_add_kernel"),  # no flow: joined by correlation
        ("cudaGraphLaunch", "graph_kernel_a"),
        ("cudaGraphLaunch", "graph_kernel_b"),
        ("cudaLaunchKernel", "gemm_kernel<float, 128>"),
    ]
    assert len(trace.flows) == 0


def test_overlaps_nest_as_torch_nests_them_and_bad_events_are_counted():
    trace = load_trace(DATA / "overlaps_and_zero.json")
    lane = trace.lanes[0]
    s = trace.slices
    names = {trace.slice_name(r): r for r in range(lane.lo, lane.hi)}
    assert set(names) == {
        "parent",
        "same-start child",
        "zero",
        "zero twin",
        "overlapper",
        "after",
        "no dur",
    }
    assert s.depth[names["same-start child"]] == 1
    assert s.parent[names["same-start child"]] == names["parent"]
    assert s.depth[names["zero"]] == 1 and s.depth[names["zero twin"]] == 1
    # "overlapper" starts inside "parent" and ends after it: as in torch's tree it is not
    # parent's child but its sibling, on parent's row, and "after" (inside it) is its child.
    assert (s.depth[names["overlapper"]], s.parent[names["overlapper"]]) == (0, -1)
    assert s.parent[names["after"]] == names["overlapper"] and s.depth[names["after"]] == 1
    assert lane.levels == lane.rows == 2
    assert trace.skipped == {"negative dur": 1, "missing or non-numeric ts": 2}
    assert trace.adjusted == {"X without dur, drawn with zero length": 1}


def test_begin_end_instants_counters_and_async():
    trace = load_trace(DATA / "begin_end.json")
    s = trace.slices
    spans = {
        (trace.lanes[_lane(trace, r)].name, trace.slice_name(r)): (int(s.start[r]), int(s.dur[r]))
        for r in range(len(s))
    }
    assert spans[("thread 4", "outer")] == (0, 30_000)
    assert spans[("thread 4", "inner")] == (10_000, 10_000)
    # Unclosed B closes at the trace end (the last event ends at 80 us, 70 us after t=0).
    assert spans[("thread 5", "never closed")] == (40_000, 30_000)
    assert spans[("async", "request")] == (2_000, 23_000)
    assert spans[("async", "parse")] == (4_000, 2_000)
    assert trace.skipped == {"E without a matching B": 1, "unsupported phase 'P'": 1}
    assert trace.adjusted == {"B without E, closed at the trace end": 1}
    inst = trace.instants
    names = [trace.names[n] for n in inst.name]
    thread_lane = next(lane.index for lane in trace.lanes if lane.name == "thread 4")
    assert inst.lane[names.index("thread instant")] == thread_lane
    assert inst.lane[names.index("process instant")] == -1
    assert inst.process[names.index("process instant")] == 0
    assert inst.process[names.index("global instant")] == -1
    assert not any(lane.tid in (98, 99) for lane in trace.lanes)
    series = {c.name: c.values.tolist() for c in counter_series(trace)}
    assert series == {"queue.depth": [1.0, 3.0], "queue.bytes": [100.0, 50.0]}


def _lane(trace, row):
    return trace.lane_of(row).index


def test_2021_kineto_string_tids_and_legacy_categories():
    trace = load_trace(DATA / "kineto_2021_strings.json")
    kinds = {lane.name: lane.kind for lane in trace.lanes}
    assert kinds == {
        "thread 500": "cpu",
        "PyTorch Profiler": "cpu",
        "stream 7": "gpu",
        "stream 12": "gpu",
    }
    # The flow start names tid 500 as a number, the op as the string "500": one thread.
    assert len(trace.launches) == 1
    assert trace.slice_name(int(trace.launches.dst[0])) == "implicit_convolve_sgemm"
    assert trace.devices[0]["name"] == "Tesla V100"
    # Epoch-microsecond timestamps: t=0 has an absolute time.
    assert trace.base_time_ns == 1621401187224400 * 1000


def test_flow_binding_rules_v1_and_v2():
    trace = load_trace(DATA / "flows_v1_v2.json")
    pairs = sorted(
        (trace.slice_name(a), trace.slice_name(b))
        for a, b in zip(trace.flows.src, trace.flows.dst, strict=True)
    )
    assert pairs == [
        ("relay", "next after f"),  # f without bp "e" binds to the next slice
        ("sender", "relay"),
        ("v2 out", "v2 in"),
        ("v2 out", "v2 in too"),
    ]


def test_flow_events_without_a_usable_ts_or_id_are_skipped_and_counted(tmp_path):
    """One flow pair of each kind of id links; a point with no ts, no id or a ts beyond the
    range is skipped, and the flows around it still link."""

    def x(name, ts):
        return {"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 5}

    def flow(ph, ts, fid, cat="c"):
        event = {"ph": ph, "name": "f", "cat": cat, "pid": 1, "tid": 1, "id": fid, "ts": ts}
        event["bp"] = "e"  # bound to the slice that holds it
        if ts is None:
            del event["ts"]
        if fid is None:
            del event["id"]
        return event

    events = [x("a", 0), x("b", 10), x("c", 20), x("d", 30)]
    events += [
        flow("s", 1, 7),
        flow(
            "f",
            11,
            7,
        ),
        flow("s", 21, "text id"),
        flow("f", 31, "text id"),
    ]
    events += [flow("s", None, 8), flow("f", 12, None), flow("s", 5e15, 9)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_trace(path)
    pairs = sorted(
        (trace.slice_name(a), trace.slice_name(b))
        for a, b in zip(trace.flows.src, trace.flows.dst, strict=True)
    )
    assert pairs == [("a", "b"), ("c", "d")]
    assert trace.skipped == {"flow event without a usable ts or id": 3}


def test_truncated_array_keeps_every_complete_event():
    trace = load_trace(DATA / "truncated_array.json")
    assert trace.format.truncated
    assert len(trace.slices) == 3
    assert not trace.skipped


def test_truncated_object_drops_only_the_cut_event():
    trace = load_trace(DATA / "truncated_object.json")
    assert trace.format.truncated
    assert [trace.slice_name(r) for r in range(len(trace.slices))] == ["a", "b"]
    assert trace.skipped == {"incomplete last event": 1}


def test_args_are_decoded_lazily_per_slice():
    trace = load_trace(DATA / "gpu_streams.json")
    row = next(r for r in range(len(trace.slices)) if trace.slice_name(r) == "cudaLaunchKernel")
    assert trace.args(row) == {"External id": 1, "correlation": 101}
    row = next(r for r in range(len(trace.slices)) if trace.slice_name(r) == "Memcpy DtoH")
    assert trace.args(row) is None


def test_with_stack_annotations_cut_by_python_frames_keep_their_children():
    """record_function's range starts inside its `__enter__` frame and ends inside `__exit__`:
    torch nests it under the frame that holds it whole and counts the frames as ops."""
    trace = load_trace(DATA / "with_stack.json")
    s = trace.slices
    row = {trace.slice_name(r): r for r in range(len(s))}
    step, decode = row["run.py(10): step"], row["decode"]
    assert s.parent[decode] == step and s.depth[decode] == 1
    assert s.depth[row["torch/autograd/profiler.py(700): __enter__"]] == 1  # decode's row
    assert s.parent[row["model.py(5): forward"]] == decode
    ops = {o.name: o for o in op_stats(trace)}
    us = 1000
    assert {n: o.self_cpu_ns // us for n, o in ops.items() if o.cpu_total_ns} == {
        "run.py(10): step": 35,
        "torch/autograd/profiler.py(700): __enter__": 10,
        "decode": 45,
        "model.py(5): forward": 30,
        "aten::linear": 20,
        "aten::addmm": 30,
        "cudaLaunchKernel": 10,
        "torch/autograd/profiler.py(710): __exit__": 20,
    }
    assert sum(o.self_cpu_ns for o in ops.values()) == 200 * us  # the one root's span
    assert ops["aten::addmm"].self_cuda_ns == 30 * us
    assert ops["decode"].cuda_total_ns == ops["run.py(10): step"].cuda_total_ns == 30 * us


def test_epoch_timestamps_keep_their_nanoseconds():
    """A float64 near 1.7e15 us is spaced 0.25 us apart; the file's three decimals must stay."""
    trace = load_trace(DATA / "epoch_ns.json")
    s = trace.slices
    starts = {trace.slice_name(r): int(s.start[r]) for r in range(len(s))}
    assert starts == {"parent": 1, "child": 123, "sibling": 623, "k": 4437}
    assert int(s.dur[next(r for r in range(len(s)) if trace.slice_name(r) == "sibling")]) == 1
    assert trace.instants.ts.tolist() == [9999]
    assert trace.base_time_ns == 1_700_000_000_000_000_000


def test_flows_at_epoch_times_link_at_their_exact_times(tmp_path):
    """Epoch-microsecond times are read again exactly: the flow points must get those times
    too, or they bind to nothing."""
    base = 1_700_000_000_000_000.125

    def x(name, ts):
        return {"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": base + ts, "dur": 5}

    def flow(ph, ts):
        return {"ph": ph, "name": "f", "cat": "c", "pid": 1, "tid": 1, "id": 7, "ts": base + ts}

    events = [x("a", 0), x("b", 10), flow("s", 1), flow("f", 11) | {"bp": "e"}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_trace(path)
    pairs = [
        (trace.slice_name(a), trace.slice_name(b))
        for a, b in zip(trace.flows.src, trace.flows.dst, strict=True)
    ]
    assert pairs == [("a", "b")] and not trace.skipped
