"""The details box under the timeline: it takes the rows the lanes leave spare, and shift+up /
shift+down scroll it when it holds more than it shows."""

from __future__ import annotations

import pytest

from tests.bench.gen_trace import generate
from tests.conftest import DATA
from tests.tui.helpers import loaded, notes, resized
from tests.tui.test_key_fuzz import _play
from tui.screens import layout_rows, trace
from tui.screens.trace import DETAILS_ROWS
from tui.widgets.timeline import Timeline


async def test_few_lanes_leave_their_spare_rows_to_the_details():
    async with loaded(DATA / "memory_sync.json", (100, 40)) as (pilot, app):
        await pilot.pause()
        timeline, box = app.query_one(Timeline), app.screen.query_one("#details")
        assert timeline.size.height == len(timeline.rows)  # every lane shown, no row spare
        assert box.outer_size.height > 2 * DETAILS_ROWS
        await resized(pilot, app, 100, 24)
        assert timeline.size.height == len(timeline.rows) and box.outer_size.height > DETAILS_ROWS


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("memory_sync.json", (100, 40)),
        ("memory_sync.json", (80, 24)),
        ("truncated_object.json", (90, 30)),
    ],
)
async def test_the_first_layout_already_gives_the_details_their_rows(monkeypatch, name, size):
    """Counted before the first layout from the terminal and the other widgets' CSS (the header
    of the cut trace has two lines): the same rows the layout then gives, so the first frame
    needs no second one."""
    counted = []

    def watched(screen, timeline, box):
        rows = layout_rows.rows_for(screen, timeline, box)
        counted.append((timeline.size.height > 0, rows))
        return rows

    monkeypatch.setattr(trace, "rows_for", watched)
    async with loaded(DATA / name, size):
        pass
    before = [rows for laid_out, rows in counted if not laid_out]
    after = [rows for laid_out, rows in counted if laid_out]
    assert before and after and before[0] is not None
    assert set(before + after) == {before[0]}


async def test_many_lanes_keep_the_details_at_their_height_and_shift_keys_scroll_it(tmp_path):
    path = tmp_path / "generated.json"
    with path.open("w") as out:
        generate(3000, out)
    async with loaded(path, (80, 16)) as (pilot, app):
        timeline, box = app.query_one(Timeline), app.screen.query_one("#details")
        assert len(timeline.rows) > timeline.size.height
        assert box.outer_size.height <= DETAILS_ROWS
        await pilot.press("down", "down")  # a slice: more lines than the box shows
        await pilot.pause()
        assert box.max_scroll_y > 0 and box.scroll_y == 0
        await pilot.press("shift+down", "shift+down")
        assert box.scroll_y == 2
        await pilot.press("shift+up")
        assert box.scroll_y == 1
        # Sent in one burst (the app not waited for), each press still counts.
        await _play(pilot, ["shift+down"] * 2)
        assert box.scroll_y == min(3, box.max_scroll_y) and not notes(app)


async def test_fitting_the_details_after_the_screen_lost_them_does_nothing():
    """Found by the key coverage in a rank set: the fit runs after a refresh, when the screen
    may already be leaving (another rank opened) and its details box gone."""
    async with loaded(DATA / "memory_sync.json", (100, 40)) as (_pilot, app):
        screen = app.screen
        await screen.query_one("#details").remove()
        screen._fit_details()  # no NoMatches
        assert not screen.check_action("scroll_details", (1,))
