"""A trace full of hostile names: nothing in it acts on the terminal, anywhere it is shown."""

from __future__ import annotations

import re

from tests.conftest import DATA
from tests.tui.helpers import loaded, run
from tui.widgets.slice_details import SliceDetails
from tui.widgets.stats_table import StatsTable
from tui.widgets.timeline import Timeline

HOSTILE = DATA / "bad" / "hostile_names.json"
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _clean(text: str) -> None:
    assert not RAW_CONTROL.search(text), repr(text)


async def test_timeline_details_and_stats_show_everything_literally():
    async with loaded(HOSTILE, (200, 30)) as (pilot, app):
        timeline = app.query_one(Timeline)
        seen = []
        for _ in range(3):
            await pilot.press("right")
            seen.append(str(app.query_one(SliceDetails).render()))
            seen.append(timeline.render_line(1).text)
        await pilot.press("t")
        await pilot.pause()
        table = app.query_one(StatsTable)
        seen += [str(cell) for r in range(table.row_count) for cell in table.get_row_at(r)]
        text = "\n".join(seen)
        for piece in (
            "[bold red]x[/]",
            "[link=https://e.vil]y[/link]",
            "[@click=app.quit]z",
            "\\x1b[2J",
            "\\x1b]52;c;QUFB\\x07",
            "\\x1b]8;;https://e.vil",
            "\\x08",
            "\\x0d",
            "\\u202e",
        ):
            assert piece in text, piece
        for line in text.splitlines():
            _clean(line)


def test_summary_and_info_text_are_literal():
    for args in (
        ["summary", str(HOSTILE), "--top", "5"],
        ["info", str(HOSTILE)],
        ["summary", str(HOSTILE), "--format", "markdown"],
    ):
        done = run(*args)
        assert done.returncode == 0, done.stderr
        for line in done.stdout.splitlines():
            _clean(line)
    assert "\\x1b]52" in run("summary", str(HOSTILE)).stdout
