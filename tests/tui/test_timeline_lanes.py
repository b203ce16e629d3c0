"""Lanes, flows, search, ranges and fits on the timeline, driven with Pilot.

gpu_streams.json (see test_timeline.py): thread 7 runs aten::mm [0, 30) holding
cudaLaunchKernel [5, 15) -> gemm_kernel [20, 32) on stream 7, aten::add [40, 60) holding
cuLaunchKernel -> triton_add_kernel [54, 57) on stream 20, and cudaGraphLaunch [70, 75).
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from tests.deep_stack import write_deep_stack
from tests.tui.helpers import loaded, notes
from tui.model.present.details import slice_details
from tui.widgets.stats_pane import StatsPane
from tui.widgets.time_ruler import TimeRuler
from tui.widgets.timeline import Timeline

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


async def test_right_bracket_on_an_op_goes_to_the_first_kernel_it_caused(ui):
    pilot, t = ui
    await pilot.press("right_square_bracket")
    assert notes(t.app)[-1] == "Select a launch, a kernel or an op first."
    await pilot.press("right", "right")  # aten::add: its cuLaunchKernel started the triton kernel
    await pilot.press("right_square_bracket")
    assert name(t) == "triton_add_kernel"
    await pilot.press("left_square_bracket")
    assert name(t) == "cuLaunchKernel"


async def test_a_selected_launch_marks_its_kernel_and_brings_both_into_view(ui):
    pilot, t = ui
    await pilot.press("w")  # [23, 69) us: neither is in view
    t.select(t.lanes.get(0, 1).rows[0].item())  # cudaLaunchKernel [5, 15)
    await pilot.pause()
    assert name(t) == "cudaLaunchKernel"
    assert [t.trace.slice_name(p) for p in t.partners] == ["gemm_kernel<float, 128>"]
    assert t.window[0] <= 5 * US and t.window[1] >= 32 * US  # launch and kernel both shown
    assert t.window[1] - t.window[0] == 46 * US  # at the same zoom
    kernel_row = t.row_at(0)
    assert t.rows[kernel_row].lane == 1 and (1, 0) in t.selection.partner_rows


async def test_search_says_which_match_is_shown_and_n_walks_them(ui):
    pilot, t = ui
    await pilot.press("slash", *"graph", "enter")
    assert name(t) == "cudaGraphLaunch"
    assert notes(t.app)[-1].startswith("match 1 of 3 for 'graph'")
    await pilot.press("n")
    assert name(t) == "graph_kernel_a" and notes(t.app)[-1] == "match 2 of 3: graph_kernel_a"
    await pilot.press("N", "N")
    assert notes(t.app)[-1] == "match 3 of 3: graph_kernel_b"


async def test_a_tiny_match_is_zoomed_to_a_visible_size(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (80, 24)) as (pilot, app):
        t = app.query_one(Timeline)
        await pilot.press("slash", *"gemm_2", "enter")
        assert name(t) == "gemm_2"
        t0, t1 = t.window
        cells = t.trace.slices.dur[t.selected] * t.cells_width / (t1 - t0)
        assert cells >= 6  # 8 us of a 359 us view was under 2 cells wide


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


async def test_p_pins_and_unpins_the_lane_under_the_cursor(ui):
    pilot, t = ui
    await pilot.press("K", "K", "p")  # stream 7 leaves the pinned rows
    assert t.pinned == (2,) and not any(r.pinned and r.lane == 1 for r in t.rows)
    assert lane_name(t) == "stream 7"
    assert notes(t.app)[-1] == "stream 7 unpinned: back in its place under GPU 0"
    await pilot.press("p")  # back on top, in the trace's order again
    assert t.pinned == (1, 2) and t.rows[t.cursor].pinned and t.cursor == 0
    assert notes(t.app) == ["stream 7 pinned on top"]  # one message at a time


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


async def test_a_lane_scrolled_into_keeps_its_name_on_top(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        await pilot.press("e")  # every Python frame: 50 rows
        await pilot.press(*["j"] * 30)
        top = t.row_at(t.pinned_rows)
        assert t.rows[top].level > 0 and t.canvas.scroll_offset.y > 0
        assert t.render_line(t.pinned_rows).text.startswith(" ↳ thread 1 (pytho…")
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


async def test_right_bracket_prefers_the_kernels_over_an_autograd_flow(tmp_path):
    events = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::convolution",
            "pid": 1,
            "tid": 1,
            "ts": 0,
            "dur": 20,
        },
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": 1,
            "tid": 1,
            "ts": 5,
            "dur": 5,
            "args": {"correlation": 9},
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": "conv_kernel",
            "pid": 0,
            "tid": 7,
            "ts": 12,
            "dur": 10,
            "args": {"correlation": 9},
        },
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "ConvolutionBackward0",
            "pid": 1,
            "tid": 2,
            "ts": 50,
            "dur": 20,
        },
        {
            "ph": "s",
            "cat": "fwdbwd",
            "name": "fwdbwd",
            "id": 3,
            "pid": 1,
            "tid": 1,
            "ts": 0,
            "bp": "e",
        },
        {
            "ph": "f",
            "cat": "fwdbwd",
            "name": "fwdbwd",
            "id": 3,
            "pid": 1,
            "tid": 2,
            "ts": 50,
            "bp": "e",
        },
    ]
    async with loaded(_events(tmp_path / "fb.json", events), (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        conv = next(r for r in range(len(t.trace.slices)) if name_of(t, r) == "aten::convolution")
        t.select(conv)
        details = dict(slice_details(t.trace, conv))
        assert "starts" not in details and details["flows to"] == "ConvolutionBackward0"
        assert details["GPU work"].startswith("1 launched under it, 10 us in all")
        await pilot.press("right_square_bracket")
        assert name(t) == "conv_kernel"
        backward = next(
            r for r in range(len(t.trace.slices)) if name_of(t, r) == "ConvolutionBackward0"
        )
        assert "launched by" not in dict(slice_details(t.trace, backward))
        t.select(conv)
        await pilot.press("right_square_bracket", "left_square_bracket")
        assert name(t) == "cudaLaunchKernel"


def name_of(t, row):
    return t.trace.slice_name(row)


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


async def test_a_collapsed_lane_opens_to_the_shape_it_had(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        lane = t.rows[t.cursor].lane
        await pilot.press("e", "c")  # every frame shown, then collapsed
        assert t.lanes.mode(lane) == "collapsed"
        await pilot.press("right", "enter")  # opening it by going in
        assert t.lanes.mode(lane) == "full"


async def test_stats_keys_without_the_pane_say_how_to_open_it(ui):
    pilot, t = ui
    await pilot.press("x")
    assert notes(t.app)[-1] == "These keys work in the stats pane: t opens it."


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


async def test_a_range_needs_two_points_apart(ui):
    pilot, t = ui
    await pilot.press("r", "r")  # nothing selected: the view's centre, twice
    assert t.marked is None
    assert notes(t.app) == ["A range needs two points apart: select another slice, or move, first."]
