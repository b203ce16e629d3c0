"""Every timeline key and the mouse, on a small trace whose answers are known.

gpu_streams.json, in microseconds from its first event: on the CPU thread aten::mm [0, 30)
holding cudaLaunchKernel [5, 15), aten::add [40, 60) holding cuLaunchKernel [45, 53),
cudaGraphLaunch [70, 75); on stream 7 gemm_kernel [20, 32), graph_kernel_a [80, 84),
graph_kernel_b [85, 89), Memcpy DtoH [90, 92); on stream 20 triton_add_kernel [54, 57).
"""

from __future__ import annotations

import re

import pytest
from textual import events

from tests.conftest import DATA
from tests.tui.helpers import loaded, notes, resized
from tui.model.present.raster import gap_cells
from tui.screens.help import HelpScreen
from tui.widgets.lane_canvas import CACHED_SCREENS
from tui.widgets.slice_details import SliceDetails
from tui.widgets.timeline import Timeline

SPAN = 92_000


@pytest.fixture
async def ui():
    async with loaded(DATA / "gpu_streams.json", (120, 30)) as (pilot, app):
        yield pilot, app.query_one(Timeline)


def name(timeline):
    return timeline.trace.slice_name(timeline.selected) if timeline.selected >= 0 else None


async def test_starts_fitted_with_the_cursor_on_the_first_lane(ui):
    _, t = ui
    assert t.window == (0, SPAN)
    assert t.selected == -1 and t.rows[t.cursor].lane == 0


async def test_left_right_walk_a_row_and_comma_period_too(ui):
    pilot, t = ui
    await pilot.press("right")
    assert name(t) == "aten::mm"
    await pilot.press("right", "full_stop")
    assert name(t) == "cudaGraphLaunch"
    await pilot.press("left")
    assert name(t) == "aten::add"
    await pilot.press("comma")
    assert name(t) == "aten::mm"
    await pilot.press("left")  # nothing before the first slice
    assert name(t) == "aten::mm"


async def test_enter_goes_to_the_child_and_backspace_to_the_parent(ui):
    pilot, t = ui
    await pilot.press("right", "enter")
    assert name(t) == "cudaLaunchKernel"
    assert t.rows[t.cursor].level == 1
    await pilot.press("backspace")
    assert name(t) == "aten::mm"


async def test_brackets_follow_a_launch_to_its_kernel_and_back(ui):
    pilot, t = ui
    await pilot.press("right", "enter", "right_square_bracket")
    assert name(t) == "gemm_kernel<float, 128>"
    assert t.trace.lanes[t.rows[t.cursor].lane].name == "stream 7"
    details = str(t.app.query_one(SliceDetails).render())
    assert re.search(r"launched by\s+cudaLaunchKernel", details)
    assert re.search(r"issuing op\s+aten::mm", details)
    await pilot.press("left_square_bracket")
    assert name(t) == "cudaLaunchKernel"


async def test_up_down_and_j_k_move_between_rows(ui):
    pilot, t = ui
    await pilot.press("right", "down")
    assert name(t) == "cudaLaunchKernel"
    await pilot.press("down")  # the last row
    assert name(t) == "cudaLaunchKernel"
    await pilot.press("k", "k")  # skips the process header, up to the pinned stream 20
    assert t.trace.lanes[t.rows[t.cursor].lane].name == "stream 20"
    await pilot.press("k")
    assert t.trace.lanes[t.rows[t.cursor].lane].name == "stream 7"
    assert name(t) == "gemm_kernel<float, 128>"
    await pilot.press("j", "j")  # via triton_add_kernel [54, 57) to what runs then
    assert name(t) == "aten::add"
    await pilot.press("j")
    assert t.rows[t.cursor].level == 1


async def test_w_s_zoom_around_the_selection_and_0_fits(ui):
    pilot, t = ui
    await pilot.press("w")
    assert t.window == (23_000, 69_000)  # no selection: around the centre
    await pilot.press("s")
    assert t.window == (0, SPAN)
    await pilot.press("right", "right", "w")  # aten::add [40, 60): centre 50 us stays put
    assert t.window == (25_000, 71_000)
    await pilot.press("0")
    assert t.window == (0, SPAN)


async def test_a_d_pan_a_quarter_of_the_view(ui):
    pilot, t = ui
    await pilot.press("w", "d")
    assert t.window == (34_500, 80_500)
    await pilot.press("a", "a")
    assert t.window == (11_500, 57_500)
    await pilot.press("a", "a")
    assert t.window == (0, 46_000)  # stops at the start
    assert notes(t.app)[-1] == "At the start of the trace."


async def test_f_fits_the_selection(ui):
    pilot, t = ui
    await pilot.press("right", "right", "f")
    assert t.window == (38_000, 62_000)


async def test_g_jumps_through_idle_gaps_largest_first(ui):
    """The device's gaps first (no work on any stream), longest first; then each stream's."""
    pilot, t = ui
    await pilot.press("g")
    assert (int(t.gaps.start[t.selected_gap]), int(t.gaps.end[t.selected_gap])) == (57_000, 80_000)
    details = str(t.app.query_one(SliceDetails).render())
    assert "23 us (every GPU stream idle)" in details and "host wait" in details
    assert t.window[0] <= 57_000 and t.window[1] >= 80_000
    cells = gap_cells(t.gaps, t.rows[t.cursor].lane, *t.window, t.cells_width, t.selected_gap)
    assert cells is not None and (cells == t.selected_gap).any()  # drawn on its row
    await pilot.press("g", "g", "g", "g")
    assert (int(t.gaps.start[t.selected_gap]), int(t.gaps.end[t.selected_gap])) == (32_000, 80_000)
    details = str(t.app.query_one(SliceDetails).render())
    assert "host wait" in details and "48 us" in details and "every GPU stream" not in details
    await pilot.press("g", "g", "g")
    assert int(t.gaps.start[t.selected_gap]) == 57_000  # wraps around


async def test_c_collapses_a_lane_into_one_row_of_all_its_slices(ui):
    pilot, t = ui
    assert len(t.rows) == 5
    await pilot.press("right", "enter")  # cudaLaunchKernel, one row down
    await pilot.press("c")
    assert t.lanes.mode(0) == "collapsed" and len(t.rows) == 4
    assert name(t) == "aten::mm"  # the launch is not drawn now: the stretch holding it is
    assert t.render_line(3).text.startswith(" ▸ thread 7")
    # One row of all its slices: aten::mm, aten::add and cudaGraphLaunch are named on it.
    cells = t.render_line(3).text[t.gutter_width :]
    assert "aten::mm" in cells and "aten::add" in cells
    assert t.rows[t.cursor].lane == 0
    await pilot.press("enter")  # expands the lane again, to the launch under aten::mm
    assert t.lanes.mode(0) == "full" and name(t) == "cudaLaunchKernel"
    await pilot.press("c", "c")
    assert t.lanes.mode(0) == "full" and len(t.rows) == 5


async def test_slash_searches_and_n_shift_n_cycle(ui):
    pilot, t = ui
    await pilot.press("slash")
    await pilot.press(*"GRAPH", "enter")
    assert len(t.matches) == 3
    assert name(t) == "cudaGraphLaunch"
    assert t.app.focused is t
    await pilot.press("n")
    assert name(t) == "graph_kernel_a"
    await pilot.press("n", "n")
    assert name(t) == "cudaGraphLaunch"
    await pilot.press("N")
    assert name(t) == "graph_kernel_b"


async def test_question_mark_shows_help_from_the_bindings(ui):
    pilot, t = ui
    await pilot.press("question_mark")
    assert isinstance(t.app.screen, HelpScreen)
    keys = dict(t.app.screen.rows)
    assert keys["w"] == "Zoom in" and keys["["] == "Flow back" and keys["/"] == "Search"
    await pilot.press("escape")
    assert not isinstance(t.app.screen, HelpScreen)


async def test_click_selects_the_slice_under_the_mouse(ui):
    pilot, t = ui
    x = t.gutter_width + int(26_000 / SPAN * t.cells_width)
    await pilot.click(Timeline, offset=(x, 0))  # stream 7 (pinned), 26 us: the gemm kernel
    assert name(t) == "gemm_kernel<float, 128>"


async def test_ctrl_wheel_zooms_and_the_wheel_alone_does_not(ui):
    pilot, t = ui
    x = t.gutter_width + t.cells_width // 2

    def wheel(kind, ctrl):
        return kind(t, x, 3, 0, 1, 0, False, False, ctrl, screen_x=x, screen_y=3)

    t.post_message(wheel(events.MouseScrollUp, True))
    await pilot.pause()
    assert t.window[1] - t.window[0] == SPAN // 2
    t.post_message(wheel(events.MouseScrollDown, False))
    await pilot.pause()
    assert t.window[1] - t.window[0] == SPAN // 2
    t.post_message(wheel(events.MouseScrollDown, True))
    await pilot.pause()
    assert t.window == (0, SPAN)


async def test_a_repeated_render_is_a_cache_hit(ui):
    pilot, t = ui
    first = t.render_line(4)
    assert t.render_line(4) is first
    await pilot.press("w")
    assert t.render_line(4) is not first


async def test_resizing_keeps_working(ui):
    pilot, t = ui
    for size in ((80, 24), (200, 60), (40, 12)):
        await resized(pilot, t.app, *size)
        assert len(t.render_line(4).text) == t.size.width
        await pilot.press("right", "w", "d")


async def test_the_strip_cache_is_bounded_and_a_theme_change_repaints(ui):
    pilot, t = ui
    first = t.render_line(2)
    for _ in range(12):  # selection changes keep adding strips; old ones must go
        await pilot.press("right")
        for y in range(t.size.height):
            t.render_line(y)
    assert t.canvas.cached <= CACHED_SCREENS * t.size.height
    before = t.render_line(2)
    assert t.render_line(2) is before
    t.app.theme = "textual-light" if t.app.theme != "textual-light" else "textual-dark"
    await pilot.pause()
    after = t.render_line(2)
    assert after is not before and after is not first
    assert after.text == before.text  # same content, painted again in the new styles
    assert [seg.style for seg in after] != [seg.style for seg in before]


async def test_f_on_a_gap_fits_the_view_to_it_again(ui):
    pilot, t = ui
    await pilot.press("g")
    fitted = t.window
    await pilot.press("s", "s", "s", "a", "a")  # zoomed out and panned away
    assert t.window != fitted
    await pilot.press("f")
    assert t.window == fitted and t.selected_gap >= 0
