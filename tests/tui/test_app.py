"""The app driven as a user drives it, with Textual's Pilot."""

from __future__ import annotations

from tests.conftest import DATA
from tui.cli import make_app
from tui.widgets.lane_table import LaneTable
from tui.widgets.trace_summary import TraceSummary


async def test_app_loads_in_the_background_and_lists_lanes():
    app = make_app(DATA / "gpu_streams.json")
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.trace is not None
        table = app.query_one(LaneTable)
        assert table.row_count == 3
        assert [str(table.get_row_at(i)[1]) for i in range(3)] == [
            "thread 7",
            "stream 7",
            "stream 20",
        ]
        summary = str(app.query_one(TraceSummary).render())
        assert "gpu_streams.json" in summary and "Test GPU" in summary
        await pilot.press("down", "down")
        assert table.cursor_row == 2
        await pilot.press("q")
    assert app.return_code == 0 and app.load_error is None


async def test_app_reports_a_bad_file_and_exits_1(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json")
    app = make_app(bad)
    async with app.run_test() as pilot:
        # The load fails in its worker and the app exits by itself; wait for that.
        for _ in range(500):
            if app.load_error is not None:
                break
            await pilot.pause(0.01)
    assert app.return_code == 1
    assert app.load_error is not None and "not JSON" in app.load_error


async def test_markup_in_names_is_shown_literally(tmp_path):
    p = tmp_path / "markup.json"
    p.write_text(
        '[{"ph": "X", "name": "x", "pid": "[bold]pid[/bold]", "tid": "[@click=quit]t",'
        ' "ts": 0, "dur": 1}]'
    )
    app = make_app(p)
    async with app.run_test(size=(100, 20)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        row = app.query_one(LaneTable).get_row_at(0)
        assert str(row[0]) == "[bold]pid[/bold]"
        assert str(row[1]) == "[@click=quit]t"
