"""`q` in a pane closes the pane; only `q` on the timeline quits (issue 30, item 8)."""

from __future__ import annotations

import pytest

from tests.model.test_diff import step_trace
from tests.tui.helpers import loaded
from tui.widgets.diff_pane import DiffPane
from tui.widgets.stats_pane import StatsPane
from tui.widgets.timeline import Timeline
from tui.widgets.tree_pane import TreePane


@pytest.mark.parametrize(
    ("opening", "pane"),
    [(["t"], StatsPane), (["T"], TreePane), (["T", "f"], TreePane), (["D"], DiffPane)],
)
async def test_q_in_a_pane_closes_it_and_q_on_the_timeline_quits(tmp_path, opening, pane):
    step_trace(tmp_path / "base.json", [("k_softmax", 10.0), ("k_mul", 10.0)])
    step_trace(tmp_path / "new.json", [("triton_fused", 12.0)], steps=3)
    async with loaded(tmp_path / "base.json", (120, 40), new=tmp_path / "new.json") as (
        pilot,
        app,
    ):
        await pilot.press(*opening)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.query(pane)
        await pilot.press("q")
        assert not app.query(pane) and app.is_running
        assert isinstance(app.focused, Timeline)
        await pilot.press("q")
        assert not app.is_running


async def test_q_in_a_panes_filter_types_itself(tmp_path):
    step_trace(tmp_path / "t.json", [("k_softmax", 10.0)])
    async with loaded(tmp_path / "t.json", (120, 40)) as (pilot, app):
        await pilot.press("t", "slash", "q")
        assert app.query_one(StatsPane).query_one("#filter").value == "q" and app.is_running
