"""Every real trace in ../shared/traces loads and agrees with a count made in plain Python
over orjson's parse."""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter
from decimal import Decimal

import numpy as np
import pytest

from tests.conftest import SHARED, raw_events, shared_model, shared_traces
from tui.model.analysis.ops import op_stats
from tui.model.analysis.summary import OUTSIDE_GAPS, summarize
from tui.model.errors import TraceError
from tui.model.ingest import load_trace

TRACES = shared_traces()
# Valid JSON that is no trace: an execution trace, a cloud trace, and the graph-capture
# companions' `execution_details.json` (which capture trace goes with a replay).
NOT_TRACES = {"not_a_trace_execution_trace_et.json.gz", "google_cloud_trace.json"} | {
    p.name for p in TRACES if p.name.endswith(".execution_details.json")
}
pytestmark = pytest.mark.skipif(not TRACES, reason=f"real traces not present: {SHARED} is missing")


def _ident(v):
    return int(v) if isinstance(v, str) and v.isdigit() else v


_NUMBER = (int, float)  # a tuple: `int | float` is built again at each of millions of calls


def _number(v):
    return isinstance(v, _NUMBER) and not isinstance(v, bool)


def _expected(events: list) -> tuple[Counter, int, Counter]:
    """Phase counts, slice count and slices per (pid, tid), counted the plain way."""
    phases = Counter(e["ph"] for e in events)
    per_thread: Counter = Counter()
    slices = 0
    for e in events:
        ph = e["ph"]
        if not _number(e.get("ts")):
            continue
        if (ph == "X" and not (_number(e.get("dur")) and e["dur"] < 0)) or ph == "B":
            per_thread[(_ident(e["pid"]), _ident(e["tid"]))] += 1
            slices += 1
        elif ph in ("b", "S") and ("id" in e or "id2" in e):
            slices += 1
    return phases, slices, per_thread


@pytest.fixture(
    scope="module",
    params=[p for p in TRACES if p.name not in NOT_TRACES],
    ids=lambda p: str(p.relative_to(SHARED)),
)
def real(request):
    """(its events parsed by orjson, the model): each file parsed once for all the tests below
    (pytest runs a module-scoped parameter's tests together), and loaded once per process."""
    path = request.param
    return raw_events(path), shared_model(path)


def test_real_trace_matches_an_independent_count(real):
    events, trace = real
    phases, slices, per_thread = _expected(events)
    assert trace.events_by_phase == phases
    assert len(trace.slices) == slices
    lanes = {(lane.pid, lane.tid): lane.slice_count for lane in trace.lanes if lane.kind != "async"}
    for key, count in per_thread.items():
        assert lanes[key] == count, key
    s = trace.slices
    # Children sit inside their parents, on the same lane, one row deeper.
    child = s.parent >= 0
    parents = s.parent[child]
    assert (s.start[child] >= s.start[parents]).all()
    assert (s.start[child] + s.dur[child] <= s.start[parents] + s.dur[parents]).all()
    # One row deeper, except where one of the two was drawn on an extra row of its lane.
    levels = np.zeros(len(s), np.int64)
    for lane in trace.lanes:
        levels[lane.lo : lane.hi] = lane.levels
    in_tree = s.depth < levels
    both = in_tree[child] & in_tree[parents]
    assert (s.depth[child][both] == s.depth[parents][both] + 1).all()
    for lane in trace.lanes:
        assert (s.depth[lane.lo : lane.hi] < max(lane.rows, 1)).all()
    gpu = {i for lane in trace.lanes if lane.kind == "gpu" for i in range(lane.lo, lane.hi)}
    assert all(int(d) in gpu for d in trace.launches.dst)
    assert not any(int(src) in gpu for src in trace.launches.src)


@pytest.mark.parametrize("name", sorted(NOT_TRACES))
def test_json_that_is_not_a_trace_is_refused_clearly(shared, name):
    path = next(p for p in TRACES if p.name == name)
    with pytest.raises(TraceError, match="not a trace") as info:
        load_trace(path)
    assert name in str(info.value)


CUT_FILES = [
    "kineto/h100_after_fix_trace.json",
    "hta/a100_simple_add.json.gz",
    "catapult/big_trace.json",
    "catapult/simple_trace_gz.gz",
    "kineto/gpu_metrics_input.json",
]


@pytest.mark.parametrize("name", CUT_FILES)
def test_truncated_copies_load_fewer_events_or_fail_clearly(shared, tmp_path, name):
    path = shared / name
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    full = len(shared_model(path).slices)
    cut_file = tmp_path / "cut.json"
    for i in range(1, 25):
        cut_file.write_bytes(raw[: len(raw) * i // 25])
        try:
            trace = load_trace(cut_file)
        except TraceError as e:
            assert "cut.json" in str(e)
            continue
        assert len(trace.slices) <= full
        assert trace.format.truncated


def test_a_cut_gzip_stream_still_loads(shared, tmp_path):
    raw = (shared / "hta/a100_simple_add.json.gz").read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(raw[: len(raw) * 2 // 3])
    trace = load_trace(cut)
    assert trace.format.truncated and trace.format.gzip
    assert 0 < len(trace.slices) < 838


GPU_WORK = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", "mtia_ccp_events"}
RUNTIME = {"cuda_runtime", "cuda_driver", "runtime", "mtia_runtime"}


def test_gpu_time_is_attributed_and_adds_up(real):
    """On every trace (those without GPU work included: zero everywhere)."""
    events, trace = real
    launched = {
        e["args"]["correlation"]
        for e in events
        if e.get("ph") == "X"
        and str(e.get("cat", "")).lower() in RUNTIME
        and isinstance(e.get("args"), dict)
        and "correlation" in e["args"]
    }
    work = [
        e
        for e in events
        if e.get("ph") == "X"
        and _number(e.get("dur"))
        and str(e.get("cat", "")).lower() in GPU_WORK
    ]
    total_us = sum(e["dur"] for e in work)
    with_launch_us = sum(
        e["dur"]
        for e in work
        if isinstance(e.get("args"), dict) and e["args"].get("correlation") in launched
    )
    ops = op_stats(trace)
    unlaunched = next((o.self_cuda_ns for o in ops if o.name.startswith("(GPU work")), 0)
    attributed_ns = sum(o.self_cuda_ns for o in ops) - unlaunched
    # Every nanosecond of GPU work is either charged to an op or shown as unlaunched.
    assert attributed_ns + unlaunched == pytest.approx(total_us * 1000, abs=len(work))
    if with_launch_us:
        assert attributed_ns >= 0.98 * with_launch_us * 1000
    # GPU busy: the union of GPU work intervals, merged here the plain way.
    summary = summarize(trace, (0, trace.span_ns + 1))
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in work)
    busy, reach = 0.0, -1e300
    for a, b in spans:
        if b > reach:
            busy += b - max(a, reach)
            reach = b
    assert summary.verdict.evidence.gpu_busy_ns == pytest.approx(
        busy * 1000, rel=1e-6, abs=len(work) + 1
    )
    # Device idle: per device (pid), the time between its first and last work that no work of
    # any of its streams covers.
    by_device: dict = {}
    for e in work:
        by_device.setdefault(_ident(e["pid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    idle_us = 0.0
    for spans in by_device.values():
        spans.sort()
        covered, reach = 0.0, -1e300
        for a, b in spans:
            if b > reach:
                covered += b - max(a, reach)
                reach = b
        idle_us += max(b for _, b in spans) - spans[0][0] - covered
    device_idle = sum(ns for cause, ns in summary.idle_ns.items() if cause != OUTSIDE_GAPS)
    assert device_idle == pytest.approx(idle_us * 1000, rel=1e-6, abs=2 * len(work) + 1)


REPORTS = SHARED / "tracelens" / "reports"
# TraceLens's report folder -> the trace in ../shared it was made from (reports/README.md). The
# resnet "recompute" report is left out: that README doubts it is of the trace kept here.
TRACELENS = {
    "h100_gaunernst_bert-small-uncased__1016001": "h100_bert_small.json.gz",
    "h100_Falconsai_nsfw_image_detection__1016002": "h100_falconsai_nsfw.json.gz",
    "h100_Qwen_Qwen1.5-0.5B-Chat__1016005": "h100_qwen1.5_0.5b_chat.json.gz",
    "h100_facebook_timesformer-base-finetuned-k400__1016002": "h100_timesformer.json.gz",
    "mi300_gaunernst_bert-small-uncased__1016001": "mi300_bert_small.json.gz",
    "torch_compile_triton_trace": "mi300_torch_compile_triton.json.gz",
    "mi210_gpu_only_trace_gpu_only_trace": "mi210_gpu_only.json.gz",
    "mi300_vllm_graph_execution_full": "mi300_vllm_graph_execution_full.json.gz",
    "mi300_sglang_qwen3_8b_decode": "mi300_sglang_qwen3_8b_decode.json.gz",
}


@pytest.mark.parametrize("report", sorted(TRACELENS))
def test_gpu_time_matches_tracelenss_gpu_timeline(shared, report):
    """TraceLens measures over the GPU side of the profiler step (its gpu_user_annotation) when
    the trace has one, else from the first to the last GPU event."""
    from tui.model.analysis.gpu_time import gpu_time

    with open(REPORTS / report / "gpu_timeline.csv") as f:
        theirs = {row["type"]: float(row["time ms"]) for row in csv.DictReader(f)}
    trace = shared_model(SHARED / "tracelens" / TRACELENS[report])
    s = trace.slices
    gpu = np.flatnonzero(trace.kind_mask("gpu"))
    steps = [
        r
        for r in gpu
        if trace.categories[int(s.cat[r])] == "gpu_user_annotation"
        and trace.slice_name(int(r)).startswith("ProfilerStep")
    ]
    window = steps or gpu
    t = gpu_time(trace, int(s.start[window].min()), int(s.end[window].max()))
    ours = {
        "computation_time": t.computation_ns,
        "exposed_comm_time": t.exposed_comm_ns,
        "exposed_memcpy_time": t.exposed_memcpy_ns,
        "busy_time": t.busy_ns,
        "idle_time": t.idle_ns,
        "total_time": t.window_ns,
        "total_comm_time": t.communication_ns,
        "total_memcpy_time": t.memcpy_ns,
    }
    for key, ns in ours.items():
        # TraceLens rounds nothing, but reads the file's float microseconds: a few ns apart.
        assert ns / 1e6 == pytest.approx(theirs[key], rel=1e-4, abs=1e-4), key


EPOCH_TRACES = [
    "hta/a100_alexnet.json.gz",
    "hta/v100_ws2_rank1_trace_diff_test.json.gz",
    "kineto/gpu_metrics_input.json",
    "param/dlrm_kineto_ws8/worker0_step_12.1694128201545.pt.trace.json",
]


@pytest.mark.parametrize("name", EPOCH_TRACES)
def test_epoch_timestamps_are_exact_to_the_nanosecond(shared, name):
    """Microseconds near 1.7e15 with three decimals do not fit a float64: every slice start
    must still be the file's own decimal, read here exactly with Decimal."""
    raw = (shared / name).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    stamps = [e["ts"] for e in events if isinstance(e.get("ts"), int | Decimal)]
    origin = Decimal(min(stamps)).to_integral_value(rounding="ROUND_FLOOR") if stamps else 0
    expected = Counter(
        int((Decimal(e["ts"]) - origin) * 1000)
        for e in events
        if e.get("ph") == "X" and isinstance(e.get("ts"), int | Decimal)
    )
    trace = shared_model(shared / name)
    ours = Counter(trace.slices.start.tolist())
    assert not expected - ours  # every X start, exactly
    assert trace.base_time_ns is not None and trace.base_time_ns % 1000 == 0
