"""Lanes on the timeline, driven with Pilot: moving between them, pinning, collapsing and
folding, the pinned rows, the scrollbar and the rows a trace without slices still has.

gpu_streams.json (see test_timeline.py): thread 7 runs aten::mm [0, 30) holding
cudaLaunchKernel [5, 15) -> gemm_kernel [20, 32) on stream 7, aten::add [40, 60) holding
cuLaunchKernel -> triton_add_kernel [54, 57) on stream 20, and cudaGraphLaunch [70, 75).
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from tests.deep_stack import write_deep_stack
from tests.tui.helpers import built, loaded, notes
from tui.widgets.time_ruler import TimeRuler
from tui.widgets.timeline import Timeline
from tui.widgets.tree_pane import TreePane

US = 1000


def name(t):
    return t.trace.slice_name(t.selected) if t.selected >= 0 else None


def lane_name(t):
    return t.trace.lanes[t.rows[t.cursor].lane].name


@pytest.fixture
async def ui():
    async with loaded(DATA / "gpu_streams.json", (120, 30)) as (pilot, app):
        yield pilot, app.query_one(Timeline)


async def test_shift_j_k_move_between_lanes_and_say_when_there_are_no_more(ui):
    pilot, t = ui
    assert lane_name(t) == "thread 7"
    await pilot.press("J")
    assert lane_name(t) == "thread 7" and notes(t.app)[-1] == "No more lanes below."
    await pilot.press("K")
    assert lane_name(t) == "stream 20"
    await pilot.press("K")
    assert lane_name(t) == "stream 7"
    await pilot.press("J", "J")
    assert lane_name(t) == "thread 7"


async def test_h_goes_from_an_op_to_its_kernel_and_back_to_the_launch(ui):
    pilot, t = ui
    await pilot.press("right", "h")  # aten::mm -> the kernel its launch started
    assert name(t) == "gemm_kernel<float, 128>" and lane_name(t) == "stream 7"
    await pilot.press("h")  # and back: the launch call
    assert name(t) == "cudaLaunchKernel"
    t.select(-1)
    await pilot.press("h")  # nothing selected: to the first GPU lane
    assert lane_name(t) == "stream 7"


async def test_h_without_a_selection_lands_on_the_kernels_not_the_annotations(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        await pilot.press("h")
        assert lane_name(t) == "stream 7" and t.rows[t.cursor].level == 1
        assert name(t).startswith("gemm_")


async def test_p_pins_and_unpins_the_lane_under_the_cursor(ui):
    pilot, t = ui
    await pilot.press("K", "K", "p")  # stream 7 leaves the pinned rows
    assert t.pinned == (2,) and not any(r.pinned and r.lane == 1 for r in t.rows)
    assert lane_name(t) == "stream 7"
    assert notes(t.app)[-1] == "stream 7 unpinned: back in its place under GPU 0"
    await pilot.press("p")  # back on top, in the trace's order again
    assert t.pinned == (1, 2) and t.rows[t.cursor].pinned and t.cursor == 0
    assert notes(t.app) == ["stream 7 pinned on top"]  # one message at a time


async def test_c_on_a_stream_keeps_its_kernels_in_the_one_row(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        await pilot.press("K", "c")
        assert t.lanes.mode(t.rows[0].lane) == "collapsed" and not t.rows[1].pinned
        names = {t.trace.slice_name(int(r)) for r in t.lanes.get(t.rows[0].lane, 0).rows}
        assert names == {"gemm_0", "gemm_1", "gemm_2"}


def _wide(tmp_path, lanes: int):
    """Many threads (so the scrollbar shows) and slices at 98%, 99% and 99.5% of the span."""
    events = [
        {"ph": "X", "name": f"t{i}", "pid": 1, "tid": i, "ts": 0, "dur": 10} for i in range(lanes)
    ]
    events += [
        {"ph": "X", "name": name, "pid": 1, "tid": 0, "ts": ts, "dur": 1}
        for name, ts in (("a98", 980), ("a99", 990), ("a995", 995))
    ]
    events.append({"ph": "X", "name": "end", "pid": 1, "tid": 1, "ts": 999, "dur": 1})
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(events))
    return path


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_a_slice_at_the_right_edge_is_drawn_beside_the_scrollbar(tmp_path, size):
    async with loaded(_wide(tmp_path, 60), size) as (_, app):
        t = app.query_one(Timeline)
        assert t.draw_width < t.size.width  # a vertical scrollbar is there
        row = next(
            y
            for y in range(t.view_height)
            if t.rows[t.row_at(y)].level == 0 and t.rows[t.row_at(y)].lane == 0
        )
        line = t.render_line(row).text
        assert len(line) == t.draw_width
        assert line[-1] != " "  # a995, in the last cell


async def test_a_lane_scrolled_into_keeps_its_name_on_top(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        await pilot.press("e")  # every Python frame: 50 rows
        await pilot.press(*["j"] * 30)
        top = t.row_at(t.pinned_rows)
        assert t.rows[top].level > 0 and t.canvas.scroll_offset.y > 0
        assert t.render_line(t.pinned_rows).text.startswith(" ↳ python3 1 ")
        assert t.render_line(0).text.startswith(" ▾ stream 7")  # pinned rows stay


async def test_the_ruler_follows_the_cells_when_the_scrollbar_comes(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        ruler = app.query_one(TimeRuler)
        assert t.draw_width == t.size.width and ruler.cells == t.cells_width  # no scrollbar
        await pilot.press("e")  # 50 rows now: a scrollbar
        await pilot.pause()
        assert t.draw_width < t.size.width and ruler.cells == t.cells_width


def _events(path, events):
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def _streams(tmp_path, n: int):
    """One CPU thread launching a kernel on each of `n` streams."""
    events = []
    for i in range(n):
        events += [
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": 10 * i,
                "dur": 2,
                "args": {"correlation": i + 1},
            },
            {
                "ph": "X",
                "cat": "kernel",
                "name": f"k{i}",
                "pid": 0,
                "tid": 100 + i,
                "ts": 10 * i + 3,
                "dur": 4,
                "args": {"correlation": i + 1},
            },
        ]
    return _events(tmp_path / "streams.json", events)


async def test_streams_that_do_not_fit_are_drawn_together_in_one_pinned_row(tmp_path):
    async with loaded(_streams(tmp_path, 12), (80, 24)) as (pilot, app):
        t = app.query_one(Timeline)
        pinned = [r for r in t.rows if r.pinned]
        assert len(pinned) <= t.view_height // 2
        group = pinned[-1]
        assert group.group and len(pinned) - 1 + len(group.group) == 12
        line = t.render_line(len(pinned) - 1).text
        assert line.startswith(f" + {len(group.group)} streams")
        assert line[t.gutter_width :].strip()  # their kernels are drawn there
        # The launching thread is on screen too, with the cursor on it.
        assert t.trace.lanes[t.rows[t.cursor].lane].name == "thread 1"
        assert t.cursor in [t.row_at(y) for y in range(t.view_height)]
        await pilot.press("k")  # up from the thread: over the group row to the last pinned one
        assert t.rows[t.cursor].lane >= 0 and t.rows[t.cursor].pinned


async def test_a_trace_without_slices_answers_every_key(tmp_path):
    path = _events(
        tmp_path / "empty.json", [{"ph": "C", "name": "c", "pid": 1, "ts": 0, "args": {"v": 1}}]
    )
    async with loaded(path, (80, 24)) as (pilot, app):
        keys = ("h", "e", "c", "p", "right", "left", "enter", "backspace", "J", "g", "R", "0")
        for key in keys:
            app.clear_notifications()
            await pilot.press(key)
            assert len(notes(app)) == 1, key  # each says why it did nothing; none raised


async def test_counters_without_a_process_still_get_rows(tmp_path):
    path = _events(
        tmp_path / "c.json",
        [{"ph": "C", "name": "load", "ts": t, "args": {"v": t}} for t in range(5)],
    )
    async with loaded(path, (80, 24)) as (_, app):
        t = app.query_one(Timeline)
        assert [r.counter for r in t.rows] == [0]


async def test_collapsing_and_expanding_gives_the_selection_back(ui):
    pilot, t = ui
    await pilot.press("right", "enter")
    assert name(t) == "cudaLaunchKernel"
    await pilot.press("c")
    assert name(t) == "aten::mm"
    await pilot.press("c")
    assert name(t) == "cudaLaunchKernel" and t.rows[t.cursor].level == 1


async def test_enter_on_a_collapsed_lane_without_children_leaves_it_collapsed(ui):
    pilot, t = ui
    await pilot.press("right", "right", "right", "c")  # cudaGraphLaunch: nothing under it
    assert name(t) == "cudaGraphLaunch"
    await pilot.press("enter")
    assert t.lanes.mode(0) == "collapsed" and notes(t.app)[-1] == "This slice has nothing under it."


async def test_a_collapsed_lane_opens_to_the_shape_it_had(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        lane = t.rows[t.cursor].lane
        await pilot.press("e", "c")  # every frame shown, then collapsed
        assert t.lanes.mode(lane) == "collapsed"
        await pilot.press("right", "enter")  # opening it by going in
        assert t.lanes.mode(lane) == "full"


async def test_a_panes_keys_act_only_where_the_pane_has_the_keys(ui):
    """Issue 28: with the call tree open and the timeline focused, `x` said "open the stats
    pane" (the app forwarded the stats pane's keys). Now `x` is the tree's, in the tree."""
    pilot, t = ui
    app = t.app
    await pilot.press("x")
    assert "x" not in app.screen.active_bindings and not notes(app)
    await pilot.press("T")
    await built(app, pilot)
    pane = app.query_one(TreePane)
    assert app.focused is pane.query_one("#calls")
    weight = pane.weight
    await pilot.press("x")
    assert pane.weight != weight
    t.focus()
    await pilot.press("x")
    assert pane.weight != weight and not notes(app)


async def test_the_title_stays_on_one_line_at_80_columns(tmp_path):
    events = json.loads((DATA / "gpu_streams.json").read_text())
    events["deviceProperties"] = [
        {"id": i, "name": "NVIDIA H100 80GB HBM3 PCIe Gen5"} for i in range(8)
    ]
    path = tmp_path / "named.json"
    path.write_text(json.dumps(events))
    async with loaded(path, (80, 24)) as (_, app):
        from tui.widgets.trace_summary import TraceSummary

        summary = app.query_one(TraceSummary)
        assert summary.size.height == 1 and str(summary.render()).count("\n") == 0


async def test_page_keys_and_home_end_scroll_the_rows_under_the_pinned_ones(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        await pilot.press("e")  # every Python frame: 50 rows, more than the view
        await pilot.press("home")
        assert t.canvas.scroll_offset.y == 0
        await pilot.press("pagedown")  # a page less the rows held on top
        assert t.canvas.scroll_offset.y == t.view_height - t.fixed_rows
        await pilot.press("end")
        assert t.canvas.scroll_offset.y == t.canvas.max_scroll_y > t.view_height - t.fixed_rows
        await pilot.press("pageup")
        assert t.canvas.scroll_offset.y == t.canvas.max_scroll_y - t.view_height + t.fixed_rows
        assert t.render_line(0).text.startswith(" ▾ stream 7")  # the pinned rows stay
        # They jump, not animate: there already, before any frame.
        t.action_scroll_home()
        assert t.canvas.scroll_offset.y == 0
        t.action_scroll_end()
        assert t.canvas.scroll_offset.y == t.canvas.max_scroll_y
