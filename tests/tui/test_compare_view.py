"""`trace-tui BASE NEW`: both traces open, `o` switches between them at the same place in the
same step, `D` shows what changed, and enter on a row goes to that op in the shown trace."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable

from tests.model.test_diff import step_trace
from tests.tui.helpers import loaded, notes, resized
from tui.model.analysis.steps import step_windows
from tui.widgets.diff_pane import DiffPane


@pytest.fixture
def pair(tmp_path):
    step_trace(tmp_path / "eager.json", [("k_softmax", 10.0), ("k_mul", 10.0), ("k_add", 10.0)])
    step_trace(tmp_path / "compiled.json", [("triton_fused_attn", 12.0)], steps=3, step_us=130.0)
    return tmp_path / "eager.json", tmp_path / "compiled.json"


async def test_o_switches_to_the_other_trace_in_the_same_step(pair):
    async with loaded(pair[0], (120, 30), new=pair[1]) as (pilot, app):
        assert app.changes is not None and app.side == 0
        assert "BASE" in str(app.query_one("TraceSummary").render())
        timeline = app.query_one("Timeline")
        base_steps = step_windows(app.trace)
        a = base_steps[1][1]
        timeline.set_window((a + 10_000, a + 30_000))  # 10 us into the second step
        await pilot.press("o")
        await pilot.pause()
        assert app.side == 1 and str(app.trace.path) == str(pair[1])
        assert "NEW" in str(app.query_one("TraceSummary").render())
        b = step_windows(app.trace)[1][1]
        assert b != a and app.query_one("Timeline").window == (b + 10_000, b + 30_000)
        await pilot.press("o")
        await pilot.pause()
        assert app.side == 0 and app.query_one("Timeline").window == (a + 10_000, a + 30_000)


async def test_the_diff_pane_ranks_filters_and_jumps(pair):
    async with loaded(pair[0], (120, 30), new=pair[1]) as (pilot, app):
        await pilot.press("D")
        await pilot.pause()
        pane = app.query_one(DiffPane)
        grid = pane.query_one("#diff")
        assert grid.has_focus and grid.row_count > 3
        await pilot.press("x")  # the kernel table
        await pilot.pause()
        assert pane.table == "kernels"
        names = [r.name for r in pane._shown]
        assert names[0] == "triton_fused_attn"  # the largest change: +36 us
        await pilot.press("slash", *"mm_k", "enter")
        await pilot.pause()
        assert [r.name for r in pane._shown] == ["mm_kernel"] and grid.has_focus
        await pilot.press("enter")  # to the longest mm_kernel in BASE
        await pilot.pause()
        timeline = app.query_one("Timeline")
        assert app.trace.slice_name(timeline.selected) == "mm_kernel"
        await pilot.press("tab", "end", *["backspace"] * 4, *"triton", "enter", "enter")
        await pilot.pause(0.2)
        assert any("triton_fused_attn is only in NEW" in n for n in notes(app))
        await pilot.press("o")  # the pane stays open on the other trace, as it was left
        await pilot.pause()
        pane = app.query_one(DiffPane)
        assert app.side == 1 and pane.table == "kernels" and pane.filter_text == "triton"
        assert [r.name for r in pane._shown] == ["triton_fused_attn"]
        assert "added: triton_fused_attn" in str(pane.query_one("#diff-head").render())
        await pilot.press("enter")  # now there
        await pilot.pause()
        timeline = app.query_one("Timeline")
        assert app.trace.slice_name(timeline.selected) == "triton_fused_attn"
        await pilot.press("escape")
        await pilot.pause()
        assert not app.query(DiffPane) and app.query_one("#details").display


async def test_keys_of_a_pair_say_nothing_on_one_trace(pair):
    async with loaded(pair[0], (80, 24)) as (pilot, app):
        screen = app.screen  # the keys are the screen's, offered only with a pair
        assert not screen.check_action("other_trace", ()) and not screen.check_action(
            "pane", ("diff",)
        )
        assert not {"o", "D"} & set(screen.active_bindings)
        await pilot.press("D", "o")
        await pilot.pause()
        assert not app.query(DiffPane) and app.side == 0


async def test_the_diff_pane_closed_before_it_is_built_keeps_its_state(pair):
    """`D` pressed again before the pane has composed (fast keys, or `o D`): its state is the
    one it was opened with (it asked for its table, and the error screen showed)."""
    async with loaded(pair[0], (120, 30), new=pair[1]) as (pilot, app):
        screen = app.screen
        # Together: the second runs while the first waits for its pane to mount.
        await asyncio.gather(screen.action_pane("diff"), screen.action_pane("diff"))
        await pilot.pause()
        assert not app.query(DiffPane) and "diff" in screen.left


async def test_at_80_columns_the_diff_pane_narrows_its_names_so_new_and_status_show(tmp_path):
    long = "void a_very_long_templated_kernel_name_that_runs_past_any_column<float>"
    step_trace(tmp_path / "a.json", [(long, 10.0), ("k_mul", 10.0)])
    step_trace(tmp_path / "b.json", [(long, 14.0)], steps=3, step_us=130.0)
    async with loaded(tmp_path / "a.json", (80, 24), new=tmp_path / "b.json") as (pilot, app):
        await pilot.press("D", "x")  # the kernel table, where the long name is
        await pilot.pause()
        grid = app.query_one("#diff", DataTable)
        header = grid.render_line(0).text
        assert "NEW" in header and "Status" in header, header
        await resized(pilot, app, 160, 30)
        names = [str(grid.get_row_at(k)[0]) for k in range(grid.row_count)]
        assert any(len(n) > 40 for n in names)  # room again: the name's first 48 cells


async def test_a_filter_that_hides_every_row_says_so(pair):
    async with loaded(pair[0], (120, 30), new=pair[1]) as (pilot, app):
        await app.workers.wait_for_complete()
        await pilot.press("D")
        await pilot.pause()
        await pilot.press("x", "slash", *"nccl", "enter")
        await pilot.pause()
        head = str(app.query_one("#diff-head").render())
        assert "No kernel name holds “nccl”: edit or clear the filter." in head
