"""The first screen of a trace shows the GPU and the CPU launching its work, at any size.

Driven with Pilot on the hand-made with_stack trace (tests/deep_stack.py: kernels under 40
levels of Python frames) and on real traces from ../shared.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SHARED
from tests.deep_stack import write_deep_stack
from tests.tui.helpers import loaded, screen_rows
from tests.tui.test_snapshots import check, screen_text
from tui.commands.trace_args import chosen
from tui.model.present.kinds import KINDS
from tui.widgets.slice_details import SliceDetails
from tui.widgets.timeline import Timeline
from tui.widgets.timeline_scene import WORK_KINDS
from tui.widgets.trace_summary import TraceSummary

WORK = [KINDS.index(k) for k in WORK_KINDS]

SIZES = [(80, 24), (160, 45), (250, 60)]
LAUNCHES = ("cudaLaunchKernel", "hipLaunchKernel", "cuLaunchKernel", "hipExtModuleLaunchKernel")


def gpu_and_launches_on_screen(t: Timeline) -> tuple[bool, bool]:
    """Whether a GPU row holding work, and a CPU row holding launch calls, are on screen."""
    gpu = launch = False
    for row in screen_rows(t):
        if row.lane < 0:
            continue
        slices = t.lanes.get(row.lane, row.level).rows
        names = {t.trace.slice_name(int(r)) for r in slices[:2000]}
        kind = t.trace.lanes[row.lane].kind
        gpu |= kind == "gpu" and bool(np.isin(t.kinds[slices], WORK).any())
        launch |= kind == "cpu" and any(n in names for n in LAUNCHES)
    return gpu, launch


@pytest.fixture
def deep(tmp_path):
    return write_deep_stack(tmp_path / "deep_stack.json")


@pytest.mark.parametrize("size", SIZES)
async def test_a_deep_python_stack_still_shows_gpu_and_launches_first(deep, size):
    async with loaded(deep, size) as (_, app):
        t = app.query_one(Timeline)
        assert gpu_and_launches_on_screen(t) == (True, True)
        assert t.rows[0].pinned and t.trace.lanes[t.rows[0].lane].name == "stream 7"
        # The cursor starts on the launching thread, under the pinned streams.
        assert t.trace.lanes[t.rows[t.cursor].lane].name == "python3 1"
        check(f"deep_stack_{size[0]}x{size[1]}", screen_text(app))


async def test_python_frames_fold_into_one_row_and_e_shows_them_all(deep):
    async with loaded(deep, (120, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        thread = t.rows[t.cursor].lane
        assert t.lanes.count(thread) == 5  # innermost frame, step, linear, addmm, launch
        await pilot.press("right")  # the innermost frame running: model.py(5)
        assert t.trace.slice_name(t.selected) == "model.py(5): forward"
        await pilot.press("e")
        assert t.lanes.count(thread) == 50  # every frame, each on its own row
        assert t.trace.slice_name(t.selected) == "model.py(5): forward"  # still selected
        await pilot.press("e")
        assert t.lanes.count(thread) == 5
        # Going up from the innermost frame opens the lane: deep stacks stay reachable.
        await pilot.press("backspace")
        assert t.lanes.mode(thread) == "full"
        assert t.trace.slice_name(t.selected) == "model.py(4): forward"
        top = t.row_at(0) if t.cursor < t.fixed_rows else t.canvas.scroll_offset.y + t.fixed_rows
        assert top <= t.cursor < top + t.view_height  # on screen


async def test_lanes_follow_the_sort_index_and_bookkeeping_comes_last(deep):
    async with loaded(deep, (120, 40)) as (_, app):
        t = app.query_one(Timeline)
        names = [t.trace.lanes[r.lane].name for r in t.rows if r.lane >= 0 and r.level == 0]
        assert names == [
            "stream 7",
            "python3 1",
            "Buffer Flush 99",
            "PyTorch Profiler",
        ]


@pytest.mark.parametrize(
    "name", ["tracelens/h100_bert_small.json.gz", "tracelens/mi300_bert_small.json.gz"]
)
@pytest.mark.parametrize("size", SIZES)
async def test_real_with_stack_traces_show_both_halves_first(shared, name, size):
    async with loaded(SHARED / name, size) as (_, app):
        t = app.query_one(Timeline)
        assert gpu_and_launches_on_screen(t) == (True, True), screen_text(app)
        if name.startswith("tracelens/h100"):
            check(f"h100_bert_small_{size[0]}x{size[1]}", screen_text(app))


def largest_device_gap_ns(path: Path) -> int:
    """Worked out from the raw events: the longest time no kernel, copy or set runs."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    work = sorted(
        (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        for e in events
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    )
    longest, end = 0.0, work[0][1]
    for start, stop in work[1:]:
        longest, end = max(longest, start - end), max(end, stop)
    return round(longest * 1000)


async def test_the_default_example_shows_a_gpu_stream_and_a_cpu_thread_and_g_finds_a_gap():
    """What `trace-tui` with no file opens, at the smallest size: the header names the bundled
    example, the GPU stream and the launching thread are on screen, and `g` lands on the
    longest idle gap of the GPU."""
    path, shown_as = chosen(argparse.Namespace(path=None, sample=None))
    async with loaded(path, (80, 24), shown_as=shown_as) as (pilot, app):
        t = app.query_one(Timeline)
        header = str(app.query_one(TraceSummary).render())
        assert header.startswith("bundled example: BERT-small, H100 (TraceLens, MIT) · ")
        assert " · 8.39 ms · " in header  # after the first next step, once it is found
        assert gpu_and_launches_on_screen(t) == (True, True), screen_text(app)
        await pilot.press("g")
        gap = t.selected_gap
        assert gap >= 0 and t.selected < 0
        length = int(t.gaps.end[gap]) - int(t.gaps.start[gap])
        assert abs(length - largest_device_gap_ns(Path(path))) < 1000  # µs floats in the file
        details = str(app.query_one(SliceDetails).render())
        assert "248 us (every GPU stream idle)" in details and "host wait" in details
        # What the CPU did meanwhile: the main thread's call covering most of the gap.
        assert "inspect.py(2501): _signature_from_callable on python3 19392 covers" in details
