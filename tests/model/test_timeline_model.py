"""The pure functions behind the timeline: gaps, rasterising, navigation, time scale, details."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import DATA, row_named
from tui.model.analysis.gaps import CAUSES, KERNEL_WAIT_NS, idle_gaps, largest_first
from tui.model.analysis.summary import summarize
from tui.model.ingest import load_trace
from tui.model.present import navigate as nav
from tui.model.present.details import gap_details, slice_details
from tui.model.present.kinds import KINDS, slice_kinds
from tui.model.present.raster import rasterise, slice_at
from tui.model.present.rows import COLLAPSED, LaneRows, RowSlices, layout
from tui.model.timescale import format_duration, format_time, tick_step, ticks

US = 1000


@pytest.fixture(scope="module")
def gpu():
    return load_trace(DATA / "gpu_streams.json")


def _rows(starts, durs):
    start = np.asarray(starts, np.int64)
    end = start + np.asarray(durs, np.int64)
    before = np.concatenate(([0], np.cumsum(durs)))[:-1].astype(np.int64)
    return RowSlices(np.arange(len(start), dtype=np.int64), start, end, before, start[end == start])


def test_gaps_and_their_causes(gpu):
    gaps = idle_gaps(gpu)
    got = [
        (gpu.lanes[int(lane)].name, int(a), int(b), CAUSES[int(c)], bool(w))
        for lane, a, b, c, w in zip(
            gaps.lane, gaps.start, gaps.end, gaps.cause, gaps.whole_device, strict=True
        )
    ]
    assert got == [
        ("stream 7", 32 * US, 80 * US, "host wait", False),  # graph launched after the gemm
        ("stream 7", 84 * US, 85 * US, "kernel wait", False),  # under 30 us, launch queued
        ("stream 7", 89 * US, 90 * US, "kernel wait", False),
        # The device: stream 20's kernel runs in stream 7's gap, cutting it in two. Both parts
        # are under 30 us, but their launches came late: host wait goes first, as in HTA.
        ("stream 20", 32 * US, 54 * US, "host wait", True),
        ("stream 7", 57 * US, 80 * US, "host wait", True),
        ("stream 7", 84 * US, 85 * US, "kernel wait", True),
        ("stream 7", 89 * US, 90 * US, "kernel wait", True),
    ]
    # The device's gaps first, longest first; then the streams'.
    assert [int(i) for i in largest_first(gaps)] == [4, 3, 5, 6, 0, 1, 2]


def test_device_idle_is_the_headline_and_streams_are_a_breakdown():
    trace = load_trace(DATA / "device_and_streams.json")
    gaps = idle_gaps(trace)
    assert gaps.idle_ns(0, 400 * US, whole_device=True) == {
        "host wait": 100 * US,  # [200, 300): the launch came at 260, after the GPU went idle
        "kernel wait": 0,
        "other": 0,
    }
    assert gaps.idle_ns(0, 400 * US, whole_device=False) == {
        "host wait": 100 * US,
        "kernel wait": 0,
        "other": 180 * US,  # the copy stream, idle while the compute stream works
    }
    first = int(largest_first(gaps)[0])
    assert bool(gaps.whole_device[first]) and int(gaps.start[first]) == 200 * US
    summary = summarize(trace, (0, 350 * US))
    assert summary.idle_ns["host wait"] == 100 * US and summary.stream_idle_ns["other"] == 180 * US
    assert gap_details(trace, gaps, first)[0] == ("idle gap", "100 us (every GPU stream idle)")


def test_kernel_wait_is_a_gap_below_the_threshold(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(
        '[{"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 0, "dur": 1},'
        ' {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 30.9, "dur": 1},'
        ' {"ph": "X", "cat": "kernel", "name": "c", "pid": 0, "tid": 7, "ts": 31.9, "dur": 1},'
        ' {"ph": "X", "cat": "kernel", "name": "d", "pid": 0, "tid": 7, "ts": 62.9, "dur": 1}]'
    )
    gaps = idle_gaps(load_trace(p))
    stream = slice(0, gaps.device_from)
    assert [int(n) for n in gaps.length[stream]] == [29_900, 30_000]
    assert KERNEL_WAIT_NS == 30_000  # HTA's 30, in microseconds
    assert [CAUSES[int(c)] for c in gaps.cause[stream]] == ["kernel wait", "other"]


def test_rasterise_marks_bars_density_and_empty_cells():
    row = _rows([0, 100, 110, 120, 500], [100, 5, 5, 5, 0])
    cells = rasterise(row, 0, 1000, 10)  # 100 ns per cell
    assert cells.slice.tolist() == [0, -1, -1, -1, -1, -1, -1, -1, -1, -1]
    assert cells.busy[0] == 1.0 and cells.busy[1] == pytest.approx(0.15)
    assert cells.count.tolist() == [1, 3, 0, 0, 0, 1, 0, 0, 0, 0]
    assert cells.near[1] == 1  # the first slice starting in the cell colours it
    assert cells.near[5] == 4  # a zero-length slice still shows


def test_rasterise_any_window_and_width():
    row = _rows(np.arange(0, 10_000, 10), np.full(1000, 5))
    for t0, t1, width in [(0, 10_000, 7), (3, 4, 50), (9_990, 20_000, 3), (-50, 50, 11)]:
        cells = rasterise(row, t0, t1, width)
        assert len(cells.slice) == width
        assert ((cells.busy >= 0) & (cells.busy <= 1)).all()
    whole = rasterise(row, 0, 10_000, 10)
    assert whole.busy == pytest.approx(np.full(10, 0.5))


def test_slice_at_prefers_the_slice_under_the_time():
    row = _rows([0, 100], [50, 50])
    assert slice_at(row, 20) == 0
    assert slice_at(row, 75) == -1
    assert slice_at(row, 80, tolerance=30) == 1
    assert slice_at(row, 60, tolerance=30) == 0


def test_layout_collapses_lanes_and_pins_them_first(gpu):
    lanes = LaneRows(gpu)
    rows = layout(gpu, lanes)
    assert [(r.lane, r.level) for r in rows] == [(-1, 0), (0, 0), (0, 1), (-1, 0), (1, 0), (2, 0)]
    lanes.modes[0] = COLLAPSED
    assert len(layout(gpu, lanes)) == 5
    pinned = layout(gpu, lanes, (1, 2))
    assert [(r.lane, r.pinned) for r in pinned] == [(1, True), (2, True), (-1, False), (0, False)]


def test_window_zoom_pan_fit():
    assert nav.zoom((0, 1000), 0.5, None, 1000) == (250, 750)
    assert nav.zoom((0, 1000), 0.5, 100, 1000) == (50, 550)
    assert nav.zoom((250, 750), 2.0, None, 1000) == (0, 1000)
    assert nav.zoom((0, 1000), 1e-9, None, 1000) == (495, 505)  # never below 10 ns
    assert nav.pan((0, 500), 0.25, 1000) == (125, 625)
    assert nav.pan((400, 900), 0.5, 1000) == (500, 1000)  # stops at the end
    assert nav.fit(100, 200, 1000) == (80, 320)


def test_neighbours_links_and_search(gpu):
    mm, launch = row_named(gpu, "aten::mm"), row_named(gpu, "cudaLaunchKernel")
    graph = row_named(gpu, "cudaGraphLaunch")
    assert nav.children(gpu, mm).tolist() == [launch]
    assert nav.ancestors(gpu, launch) == [mm]
    assert [gpu.slice_name(r) for r in nav.linked_forward(gpu, graph)] == [
        "graph_kernel_a",
        "graph_kernel_b",
    ]
    assert nav.linked_back(gpu, row_named(gpu, "graph_kernel_b")) == [graph]
    assert [gpu.slice_name(r) for r in nav.search(gpu, "GRAPH")] == [
        "cudaGraphLaunch",
        "graph_kernel_a",
        "graph_kernel_b",
    ]
    assert len(nav.search(gpu, "")) == 0


def test_time_scale():
    assert format_duration(812) == "812 ns"
    assert format_duration(4_200) == "4.2 us"
    assert format_duration(13_500_000) == "13.5 ms"
    assert format_duration(2_010_000_000) == "2.01 s"
    assert tick_step(1_000_000, 100) == 200_000
    assert ticks(0, 1_000_000, 100)[:3] == [(0, "0 us"), (20, "200 us"), (40, "400 us")]
    assert ticks(0, 1_400_000, 100)[-2:] == [(71, "1.0 ms"), (85, "1.2 ms")]
    assert ticks(1_500, 2_500, 100)[:3] == [(10, "1.6 us"), (30, "1.8 us"), (50, "2.0 us")]
    assert ticks(0, 10_000_000_000, 100)[1] == (20, "2 s")
    # Deep in a long trace: where the view is, then offsets from there.
    assert ticks(606_150_000, 606_160_000, 100)[:3] == [
        (0, "606.150 ms"),
        (20, "+2 us"),
        (40, "+4 us"),
    ]
    assert format_time(723_412_345) == "723.412345 ms"
    assert format_time(723_961_000) == "723.961 ms"
    assert format_time(1_204_000_000) == "1.204 s"
    assert format_time(15_000) == "15 us" and format_time(812) == "812 ns"


def test_kinds_colour_by_category_and_nccl_by_name(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(
        '[{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 1,'
        ' "ts": 0, "dur": 1}, {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy", "pid": 0,'
        ' "tid": 1, "ts": 2, "dur": 1}, {"ph": "X", "cat": "weird", "name": "x", "pid": 1,'
        ' "tid": 1, "ts": 0, "dur": 1}]'
    )
    trace = load_trace(p)
    kinds = {trace.slice_name(r): KINDS[int(k)] for r, k in enumerate(slice_kinds(trace))}
    assert kinds == {"ncclKernel_AllReduce": "comm", "Memcpy": "memcpy", "x": "other"}


def test_details_of_a_kernel_and_a_launch(gpu):
    kernel = dict(slice_details(gpu, row_named(gpu, "gemm_kernel<float, 128>")))
    assert kernel["launched by"] == ("cudaLaunchKernel on thread 7, queued 15 us before it ran")
    assert kernel["issuing op"] == "aten::mm"
    assert kernel["duration"] == "12 us"
    assert kernel["start"].startswith("+20 us  (2023-11-14 22:13:20.000030000 UTC)")
    assert [k for k, _ in slice_details(gpu, row_named(gpu, "gemm_kernel<float, 128>"))][:4] == [
        "name",
        "duration",
        "launched by",
        "issuing op",
    ]
    assert kernel["  correlation"] == "101"
    launch = dict(slice_details(gpu, row_named(gpu, "cudaGraphLaunch")))
    assert launch["starts"] == (
        "graph_kernel_a (ran 10 us after this call); graph_kernel_b (ran 15 us after this call)"
    )
    mm = dict(slice_details(gpu, row_named(gpu, "aten::mm")))
    assert mm["self"] == "20 us" and mm["duration"] == "30 us"
    assert mm["GPU work"] == (
        "1 launched under it, 12 us in all (] goes to the first): gemm_kernel<float, 128>"
    )
    gaps = idle_gaps(gpu)
    gap = dict(gap_details(gpu, gaps, 0))
    assert gap["cause"] == "host wait" and gap["idle gap"] == "48 us"
    assert gap["its launch"] == "cudaGraphLaunch, 38 us after the GPU went idle"
