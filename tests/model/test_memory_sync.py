"""Memory records and synchronisation on a trace with known answers (tests/data/memory_sync.json).

In microseconds: ProfilerStep#1 [0, 100) holds "alloc" [10, 30) (1000 B on cuda:0 at 15, 64 B
on the CPU at 20), a launch of K1 [35, 40), "free" [40, 50) (-1000 B on cuda:0 at 45),
cudaStreamSynchronize [55, 90) and a launch of K2 [93, 98); the CPU block is freed at 105,
outside any op.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA, shared_model
from tui.model.analysis.gaps import idle_gaps
from tui.model.analysis.memory import OUTSIDE_OPS, counter_series, peaks
from tui.model.analysis.ops import op_stats
from tui.model.analysis.summary import summarize
from tui.model.analysis.syncs import sync_rows
from tui.model.ingest import load_trace
from tui.model.present.details import counter_details, gap_details

US = 1000


@pytest.fixture(scope="module")
def trace():
    return load_trace(DATA / "memory_sync.json")


def test_series_per_device_and_counters(trace):
    series = {c.name: (c.ts.tolist(), c.values.tolist()) for c in counter_series(trace)}
    assert series["cuda:0 allocated"] == ([15 * US, 45 * US], [1000.0, 0.0])
    assert series["cuda:0 reserved"][1] == [2048.0, 2048.0]
    assert series["cpu allocated"] == ([20 * US, 105 * US], [64.0, 0.0])
    assert series["queue.depth"] == ([0, 50 * US], [1.0, 4.0])


def test_op_memory_columns(trace):
    ops = {o.name: o for o in op_stats(trace)}
    assert (ops["alloc"].self_cuda_mem, ops["alloc"].self_cpu_mem) == (1000, 64)
    assert ops["free"].self_cuda_mem == -1000
    step = ops["ProfilerStep*"]
    assert (step.self_cpu_mem, step.cpu_mem, step.cuda_mem) == (0, 64, 0)
    assert (ops[OUTSIDE_OPS].calls, ops[OUTSIDE_OPS].cpu_mem) == (1, -64)


def test_peaks_and_summary(trace):
    by_device = {p.device: p for p in peaks(trace)}
    cuda = by_device["cuda:0"]
    assert (cuda.allocated, cuda.reserved, cuda.ts) == (1000, 2048, 15 * US)
    assert trace.slice_name(cuda.op) == "alloc"
    summary = summarize(trace)
    (peak,) = [p for p in summary.memory_peaks if p.device == "cuda:0"]
    assert (peak.step, peak.op) == ("ProfilerStep#1", "alloc")
    assert (summary.sync_calls, summary.sync_ns) == (1, 35 * US)
    assert summary.top_memory_ops[0] == ("alloc", 1064, 1)


def test_sync_calls_are_found_and_shown_against_gaps(trace):
    assert [trace.slice_name(int(r)) for r in sync_rows(trace)] == ["cudaStreamSynchronize"]
    gaps = idle_gaps(trace)
    assert (int(gaps.start[0]), int(gaps.end[0])) == (40 * US, 93 * US)
    details = dict(gap_details(trace, gaps, 0))
    assert details["cause"] == "host wait"
    assert details["CPU waiting"].startswith("cudaStreamSynchronize on thread 1 covers 35 us (66%)")


def test_counter_details(trace):
    index = next(i for i, c in enumerate(counter_series(trace)) if c.name == "cuda:0 allocated")
    details = dict(counter_details(trace, index, (0, 40 * US)))
    assert details["at the centre"].startswith("1000 B")
    assert details["highest in view"] == "1000 B"


def test_an_allocator_number_beyond_int64_skips_that_record(tmp_path):
    p = tmp_path / "t.json"
    big = {"Bytes": 2**70, "Total Allocated": 1, "Total Reserved": 1, "Device Type": 1}
    ok = {"Bytes": 8, "Total Allocated": 8, "Total Reserved": 8, "Device Type": 1}
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        *(
            {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": t, "args": a}
            for t, a in ((1, {**big, "Device Id": 0}), (2, {**ok, "Device Id": 0}))
        ),
    ]
    p.write_text(json.dumps(events))
    trace = load_trace(p)
    assert len(trace.memory) == 1
    assert trace.skipped["[memory] with no byte counts"] == 1


def test_a_windows_peak_is_its_own_with_the_level_carried_into_it(trace):
    def cuda(t0, t1):
        return next(p for p in peaks(trace, t0 * US, t1 * US) if p.device == "cuda:0")

    assert (cuda(20, 40).allocated, cuda(20, 40).ts) == (1000, 20 * US)  # allocated at 15
    assert cuda(20, 40).op == -1  # by "alloc", which is before the window
    assert cuda(50, 100).allocated == 0  # freed at 45
    assert [p.device for p in peaks(trace, 0, 10 * US)] == []  # no record yet
    windowed = summarize(trace, (50 * US, 100 * US))
    assert {p.device: p.allocated for p in windowed.memory_peaks}["cuda:0"] == 0


def test_devices_are_named_as_torch_names_them():
    from tui.model.analysis.memory import device_name

    assert [device_name(0, -1), device_name(1, 2), device_name(6, 0)] == ["cpu", "cuda:2", "hip:0"]
    assert device_name(99, 1) == "device99:1"  # a number c10 may add later


def test_a_rocm_traces_memory_rows_are_named_hip(shared):
    """MI300X (ROCm): its allocator records say HIP (c10 device type 6)."""
    trace = shared_model(shared / "tracelens" / "mi300_bert_small.json.gz")
    names = {c.name for c in counter_series(trace)}
    assert {"hip:0 allocated", "hip:0 reserved"} <= names and not any("device6" in n for n in names)
