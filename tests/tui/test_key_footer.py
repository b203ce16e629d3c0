"""The footer: what it draws follows the focus, and a click on a key presses it."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from tests.conftest import DATA
from tests.tui.helpers import loaded, resized
from tui.widgets.key_footer import KeyFooter
from tui.widgets.stats_pane import StatsPane
from tui.widgets.timeline import Timeline


def _line(footer: KeyFooter) -> str:
    return footer.render_line(0).text.rstrip()


async def test_the_footer_draws_the_keys_of_what_has_focus():
    async with loaded(DATA / "gpu_streams.json", (160, 30)) as (pilot, app):
        footer = app.screen.query_one(KeyFooter)
        first = _line(footer)
        assert "? Help" in first and "t Stats" in first
        keys = footer.shown()
        assert first == " ".join(
            f"{k.label} {k.description}" if k.description else k.label for k in keys
        )
        assert [k.start for k in keys[1:]] == [k.end + 1 for k in keys[:-1]]
        await pilot.press("t")
        await pilot.pause()
        assert app.focused is app.screen.query_one(StatsPane).query_one("StatsTable")
        assert "x Ops/kernels" in _line(footer)
        await pilot.press("t")  # the pane closed, the focus back on the timeline: its keys
        await pilot.pause()
        assert app.focused is app.query_one(Timeline)
        assert _line(footer) == first


async def test_a_click_on_a_key_presses_it():
    async with loaded(DATA / "gpu_streams.json", (160, 30)) as (pilot, app):
        footer = app.screen.query_one(KeyFooter)
        stats = next(k for k in footer.shown() if k.description == "Stats")
        await pilot.click(KeyFooter, offset=(stats.start + 1, 0))
        await pilot.pause()
        assert app.screen.query(StatsPane)
        stats = next(k for k in footer.shown() if k.description == "Stats")  # moved left
        await pilot.click(KeyFooter, offset=(stats.end, 0))  # the gap after it: nothing
        await pilot.pause()
        assert app.screen.query(StatsPane)
        await pilot.click(KeyFooter, offset=(stats.start, 0))  # `t` again closes the pane
        await pilot.pause()
        assert not app.screen.query(StatsPane)


@pytest.mark.parametrize(
    ("keys", "says"),
    [
        (["slash"], "esc Close the search"),
        (["t", "slash"], "⏎ Back to the table (the filter stays)"),
        (["T", "f", "slash"], "⏎ Back to the flame view (the highlight stays)"),
    ],
)
async def test_in_a_text_box_the_footer_says_what_its_other_keys_do(keys, says):
    async with loaded(DATA / "gpu_streams.json", (160, 30)) as (pilot, app):
        footer = app.screen.query_one(KeyFooter)
        await pilot.press(*keys)
        await pilot.pause()
        box = app.focused
        assert isinstance(box, Input)
        assert says in _line(footer)
        shown = [k.label for k in footer.shown()]
        assert "/" not in shown and "?" not in shown and "t" not in shown
        await pilot.press("slash")  # typed, as the footer says
        assert box.value == "/"
        first = footer.shown()[0]
        await pilot.click(KeyFooter, offset=(first.start, 0))  # a click presses it
        await pilot.pause()
        assert app.focused is not box


@pytest.mark.parametrize("keys", [[], ["T"], ["t"]])
async def test_a_narrow_footer_keeps_help_at_its_end(keys):
    async with loaded(DATA / "gpu_streams.json", (80, 24)) as (pilot, app):
        footer = app.screen.query_one(KeyFooter)
        await pilot.press(*keys)
        await pilot.pause()
        assert _line(footer).endswith("? Help")
        narrow = footer.shown()
        assert narrow[-1].end <= 80
        await resized(pilot, app, 200, 24)
        wide = footer.shown()
        assert len(wide) > len(narrow) and wide[-1].description == "Help"
        assert _line(footer).startswith(" ".join(f"{k.label} {k.description}" for k in narrow[:-1]))
