"""Failures inside the app show an error screen with a way back; the trace is never written."""

from __future__ import annotations

import hashlib
import shutil

from tests.conftest import DATA
from tests.tui.helpers import loaded, until_failed
from tui.model.present import navigate
from tui.screens.error import ErrorScreen
from tui.widgets.timeline import Timeline


async def test_a_failing_key_shows_the_error_and_escape_goes_back(monkeypatch):
    async with loaded(DATA / "gpu_streams.json", (100, 30), expect_error=True) as (pilot, app):

        def broken(*args, **kwargs):
            raise RuntimeError("a bug in first_inside()")

        monkeypatch.setattr(navigate, "first_inside", broken)
        await pilot.press("right", "enter")
        assert isinstance(app.screen, ErrorScreen)
        assert "a bug in first_inside()" in app.screen.message
        shown = str(app.screen.query_one("Static").render())
        assert "Traceback (most recent call last):\n" in shown and "\\x0a" not in shown
        await pilot.press("escape")
        timeline = app.query_one(Timeline)
        assert app.screen is not None and not isinstance(app.screen, ErrorScreen)
        await pilot.press("right")  # still working
        assert timeline.trace.slice_name(timeline.selected) == "aten::add"
    assert app.shown_errors == ["RuntimeError: a bug in first_inside()"]


async def test_an_error_screen_fails_a_test_that_does_not_expect_it(monkeypatch):
    """The helper every Pilot test opens the app with: a key whose action raised, and whose
    error screen was dismissed, still fails the test."""
    raised = False
    try:
        async with loaded(DATA / "gpu_streams.json", (100, 30)) as (pilot, _):
            monkeypatch.setattr(navigate, "first_inside", lambda *a, **k: 1 / 0)
            await pilot.press("right", "enter", "escape")
    except AssertionError as error:
        raised = "ZeroDivisionError" in str(error)
    assert raised


async def test_a_row_that_cannot_be_drawn_says_so(monkeypatch):
    async with loaded(DATA / "gpu_streams.json", (100, 30)) as (_, app):
        timeline = app.query_one(Timeline)

        def broken(*args, **kwargs):
            raise ValueError("bad cells")

        monkeypatch.setattr("tui.widgets.lane_canvas.paint_cells", broken)
        timeline.action_zoom(0.5)
        assert "cannot draw this row: ValueError: bad cells" in timeline.render_line(0).text
        assert timeline.render_line(2).text.startswith("process 7")  # under the pinned streams


async def test_a_full_session_never_writes_the_trace(tmp_path):
    path = tmp_path / "t.json"
    shutil.copy(DATA / "gpu_streams.json", path)
    before = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    async with loaded(path, (100, 30)) as (pilot, _):
        await pilot.press(
            "right",
            "enter",
            "right_square_bracket",
            "w",
            "s",
            "a",
            "d",
            "g",
            "c",
            "c",
            "0",
            "f",
            "down",
            "up",
            "t",
            "x",
            "v",
            "t",
            "slash",
        )
        await pilot.press(*"gemm", "enter", "n", "question_mark", "escape", "q")
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before


async def test_a_trace_the_timeline_cannot_show_exits_with_one_line(monkeypatch):
    from tui.cli import make_app

    def broken(self, trace, **kwargs):
        raise ValueError("no lanes to draw")

    monkeypatch.setattr(Timeline, "__init__", broken)
    app = make_app(DATA / "gpu_streams.json")
    async with app.run_test() as pilot:
        await until_failed(pilot, app)
    assert app.return_code == 1
    assert app.load_error.endswith(
        "cannot show (ValueError: no lanes to draw); please report this with the file"
    )
