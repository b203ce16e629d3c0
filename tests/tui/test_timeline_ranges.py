"""Ranges, fits and what the timeline draws, driven with Pilot: marking and dragging a range,
the ruler showing it, fitting the steps or the file, idle gaps, colours and the selection.

gpu_streams.json (see test_timeline.py): thread 7 runs aten::mm [0, 30) holding
cudaLaunchKernel [5, 15) -> gemm_kernel [20, 32) on stream 7, aten::add [40, 60) holding
cuLaunchKernel -> triton_add_kernel [54, 57) on stream 20, and cudaGraphLaunch [70, 75).
"""

from __future__ import annotations

import json

import pytest
from textual.app import App

from tests.conftest import DATA
from tests.deep_stack import write_deep_stack
from tests.tui.helpers import loaded, notes
from tui.widgets.stats_pane import StatsPane
from tui.widgets.time_ruler import TimeRuler
from tui.widgets.timeline import Timeline

US = 1000


@pytest.fixture
async def ui():
    async with loaded(DATA / "gpu_streams.json", (120, 30)) as (pilot, app):
        yield pilot, app.query_one(Timeline)


async def test_r_marks_a_range_the_ruler_shows_it_and_the_stats_pane_scopes_to_it(ui):
    pilot, t = ui
    await pilot.press("right", "r")  # aten::mm [0, 30)
    await pilot.press("right", "r")  # to aten::add [40, 60)
    assert t.marked == (0, 60 * US)
    ruler = str(t.app.query_one(TimeRuler).render())
    assert "60 us" in ruler and "├" in ruler and "┤" in ruler
    assert notes(t.app)[-1].startswith("Range 60 us: +0 ns to +60 us")
    await pilot.press("t")  # opened right after marking: on the range
    pane = t.app.query_one(StatsPane)
    assert pane.scope_label == "range 60 us"
    await pilot.press(*["v"] * 4)  # round the cycle (no steps here: step falls to subtree)
    assert pane.scope_label == "range 60 us"
    await pilot.press("t", "R")
    assert t.marked is None and "├" not in str(t.app.query_one(TimeRuler).render())


async def test_dragging_the_mouse_marks_a_range(ui):
    pilot, t = ui
    x0 = t.gutter_width + 10
    x1 = t.gutter_width + 40
    await pilot.mouse_down(Timeline, offset=(x0, 3))
    await pilot.mouse_up(Timeline, offset=(x1, 3))
    assert t.marked == (t.time_at(10), t.time_at(40))
    assert t.selected == -1  # the drag did not select


async def test_0_fits_the_steps_and_parenthesis_the_whole_file(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        home = t.window
        assert home[0] > 0 and home[1] < t.trace.span_ns  # the steps, not the flush at 1 us
        await pilot.press("right_parenthesis")
        assert t.window == (0, t.trace.span_ns)
        await pilot.press("0")
        assert t.window == home


async def test_idle_gaps_are_drawn_on_one_row_of_a_stream(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (_, app):
        t = app.query_one(Timeline)
        lines = [t.render_line(y).text[t.gutter_width :] for y in (0, 1)]
        assert t.rows[0].lane == t.rows[1].lane  # stream 7: annotations, then kernels
        assert "─" not in lines[0] and "─" in lines[1]


async def test_a_few_far_away_events_do_not_blank_the_view(tmp_path):
    """As on a Fuchsia trace: 45 async events long before the rest."""
    events = [
        {"ph": "b", "cat": "x", "name": f"early{i}", "id": i, "pid": 1, "tid": 1, "ts": i}
        for i in range(45)
    ] + [
        {"ph": "e", "cat": "x", "name": f"early{i}", "id": i, "pid": 1, "tid": 1, "ts": i + 1}
        for i in range(45)
    ]
    events += [
        {
            "ph": "X",
            "name": f"work{i % 7}",
            "pid": 1,
            "tid": 2 + i % 3,
            "ts": 10_000_000 + 20 * i,
            "dur": 15,
        }
        for i in range(1000)
    ]
    path = tmp_path / "far.json"
    path.write_text(json.dumps(events))
    async with loaded(path, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        assert t.window[0] >= 9_900_000 * US
        drawn = [t.render_line(y).text[t.gutter_width :] for y in range(t.view_height)]
        busy = [line for line in drawn if line.strip()]
        assert len(busy) >= 3 and all(len(line.strip()) > t.cells_width // 2 for line in busy[:3])
        await pilot.press("right_parenthesis")
        assert t.window == (0, t.trace.span_ns)


def _events(path, events):
    path.write_text(json.dumps({"traceEvents": events}))
    return path


async def test_the_range_leaves_out_ruler_labels_it_would_cut(ui):
    pilot, t = ui
    t.set_marked((19_000, 21_000))  # narrow: across the "|20 us" label
    await pilot.pause()
    ruler = str(t.app.query_one(TimeRuler).render())
    assert "20 us" not in ruler.replace(" 2 us", "")  # the cut label is gone...
    assert "├" in ruler and "2 us" in ruler  # ...and the range and its length are there
    assert "|40 us" in ruler


def _styles(t, y):
    return [(seg.text, seg.style) for seg in t.render_line(y) if seg.text.strip()]


async def test_bars_are_coloured_and_the_selection_reversed(ui):
    pilot, t = ui
    kernel = next(style for text, style in _styles(t, 0) if "gemm" in text)
    assert kernel.bgcolor is not None and kernel.bgcolor.name == "#2e8b57"  # seagreen: a kernel
    await pilot.press("right")  # aten::mm
    row = t.row_at(t.cursor) if t.cursor < t.fixed_rows else t.cursor
    selected = [style for text, style in _styles(t, row) if "aten::mm" in text]
    assert selected and selected[0].reverse


def name_of(t, row):
    return t.trace.slice_name(row)


async def test_a_selected_slice_narrower_than_a_cell_is_still_marked(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (80, 24)) as (pilot, app):
        t = app.query_one(Timeline)
        launch = next(r for r in range(len(t.trace.slices)) if name_of(t, r) == "cudaLaunchKernel")
        t.select(launch)  # 4 us in a 359 us view of 63 cells: under a cell
        await pilot.pause()
        y = next(y for y in range(t.view_height) if t.row_at(y) == t.cursor)
        assert any(style.reverse for _, style in _styles(t, y))


async def test_idle_gaps_stay_off_cpu_rows_with_nccl_named_ops(tmp_path):
    events = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "nccl:all_reduce",
            "pid": 1,
            "tid": 1,
            "ts": 0,
            "dur": 50,
        },
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 40, "dur": 5},
    ]
    async with loaded(_events(tmp_path / "n.json", events), (100, 30)) as (_, app):
        t = app.query_one(Timeline)
        cpu = next(
            i for i, r in enumerate(t.rows) if r.lane >= 0 and t.trace.lanes[r.lane].kind == "cpu"
        )
        assert "─" not in t.render_line(cpu).text[t.gutter_width :]
        assert "─" in t.render_line(0).text[t.gutter_width :]  # the stream's idle, pinned


async def test_r_says_one_thing_at_a_time(ui):
    pilot, t = ui
    await pilot.press("right", "r")
    assert len(notes(t.app)) == 1 and notes(t.app)[0].startswith("Range from +0 ns")
    await pilot.press("right", "r")
    assert notes(t.app) == ["Range 60 us: +0 ns to +60 us"]


async def test_a_range_needs_two_points_apart(ui):
    pilot, t = ui
    await pilot.press("r", "r")  # nothing selected: the view's centre, twice
    assert t.marked is None
    assert notes(t.app) == ["A range needs two points apart: select another slice, or move, first."]


async def test_a_cleared_range_gives_the_pane_back_the_scope_it_had(ui):
    """The stats pane on `view`; a range marked takes it over; R clears the range while the
    pane is closed, and the pane opens on `view` again, not on a scope the range fell to."""
    pilot, t = ui
    await pilot.press("t", "v")
    pane = t.app.query_one(StatsPane)
    assert pane.scope_name == "view"
    await pilot.press("t", "right", "r", "right", "r", "t")
    assert t.app.query_one(StatsPane).scope_label == "range 60 us"
    await pilot.press("t", "R", "t")
    assert t.marked is None and t.app.query_one(StatsPane).scope_name == "view"
    # Cleared with the pane open (the timeline focused by a click), the same.
    await pilot.press("t", "r", "right", "r", "t")
    assert t.app.query_one(StatsPane).scope_name == "range"
    t.focus()
    await pilot.press("R")
    assert t.app.query_one(StatsPane).scope_name == "view"


async def test_the_ruler_is_blank_until_the_timeline_gives_it_a_window():
    """Before it, a frame showed `|0 ns` over the first cell: the ruler's window of nothing."""

    class Bare(App[None]):
        def compose(self):
            yield TimeRuler()

    app = Bare()
    async with app.run_test(size=(60, 3)) as pilot:
        ruler = app.query_one(TimeRuler)
        assert str(ruler.render()) == ""
        ruler.show((0, 10_000), 10, 50, None)
        await pilot.pause()
        assert str(ruler.render()).startswith(" 10 us sho|0 us")  # the head cut to the gutter
