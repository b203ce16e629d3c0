"""The app driven as a user drives it, with Textual's Pilot: loading, errors, literal text."""

from __future__ import annotations

import gzip

from rich.text import Text

from tests.conftest import DATA
from tests.tui.helpers import loaded, until_failed
from tui.cli import make_app
from tui.model.ingest import load_trace
from tui.model.ingest.cache import ModelCache
from tui.model.ingest.chrome_json import args as args_module
from tui.widgets.slice_details import SliceDetails
from tui.widgets.timeline import Timeline
from tui.widgets.trace_summary import TraceSummary


async def test_app_loads_in_the_background_and_shows_the_timeline():
    async with loaded(DATA / "gpu_streams.json", (120, 30)) as (pilot, app):
        assert app.trace is not None
        timeline = app.query_one(Timeline)
        assert app.focused is timeline
        labels = [timeline.render_line(y).text[: timeline.gutter_width].strip() for y in range(5)]
        # The GPU streams pinned on top, then the CPU thread launching their work.
        assert labels == ["stream 7", "stream 20", "process 7 (python3)", "▾ thread 7", ""]
        summary = str(app.query_one(TraceSummary).render())
        assert "gpu_streams.json" in summary and "Test GPU" in summary
        await pilot.press("q")
    assert app.return_code == 0 and app.load_error is None


async def test_app_reports_a_bad_file_and_exits_1(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json")
    app = make_app(bad)
    async with app.run_test() as pilot:
        await until_failed(pilot, app)
    assert app.return_code == 1
    assert app.load_error is not None and "not JSON" in app.load_error


async def test_markup_and_escapes_in_names_are_shown_literally(tmp_path):
    p = tmp_path / "evil.json"
    p.write_text(
        '[{"ph": "X", "name": "[bold red]x[/] [link=https://e.vil]y[/link] \\u001b[2J '
        '\\u001b]52;c;QUFB\\u0007", "pid": "[@click=app.quit]p", "tid": 1, "ts": 0, "dur": 100}]'
    )
    async with loaded(p, (160, 20)) as (pilot, app):
        timeline = app.query_one(Timeline)
        header = timeline.render_line(0).text
        assert header.startswith("[@click=app.quit]p")
        await pilot.press("right")
        bar = timeline.render_line(1).text
        assert "[bold red]x[/] [link=https://e.vil]y[/link] \\x1b[2J \\x1b]52;c;QUFB\\x07" in bar
        assert "\x1b" not in bar and "\x07" not in bar
        details = str(app.query_one(SliceDetails).render())
        assert "[bold red]x[/]" in details and "\\x1b]52" in details and "\x1b" not in details


async def test_the_header_keeps_its_second_line_for_skipped_events(tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_bytes((DATA / "truncated_object.json").read_bytes())
    async with loaded(cut) as (pilot, app):
        await app.workers.wait_for_complete()
        await pilot.pause()
        lines = str(app.query_one(TraceSummary).render()).splitlines()
        assert lines[0].endswith("health: ok (H) · TRUNCATED")  # H lists the skipped event
        assert lines[1] == "skipped 1 event (1 incomplete last event)"


async def test_a_newline_in_the_name_is_shown_escaped_on_the_one_header_line():
    async with loaded(DATA / "gpu_streams.json", shown_as="two\nlines") as (_pilot, app):
        header = app.query_one(TraceSummary)
        assert str(header.render()).startswith("two\\x0alines · ") and header.size.height == 1


async def test_the_header_grows_and_shrinks_when_a_line_comes_or_goes_after_it_is_shown():
    """Health and next steps arrive from a thread (`_show`); a header that gains or loses a line
    with them is laid out again (one that keeps its line count is only repainted). Shown here
    on an idle screen, so that no other layout could pick the new height up."""
    async with loaded(DATA / "gpu_streams.json") as (pilot, app):
        await app.workers.wait_for_complete()
        await pilot.pause()
        header = app.query_one(TraceSummary)
        one = header.render()
        header._show(Text(f"{one.plain}\nchecked"))
        await pilot.pause()
        assert header.size.height == 2
        header._show(one)
        await pilot.pause()
        assert header.size.height == 1


async def test_a_cached_gzip_trace_is_reopened_by_the_loader_not_on_the_first_lookup(
    tmp_path, monkeypatch
):
    gz = tmp_path / "t.json.gz"
    gz.write_bytes(gzip.compress((DATA / "gpu_streams.json").read_bytes()))
    cache = ModelCache(tmp_path / "cache")
    load_trace(gz, cache=cache)  # the entry
    async with loaded(gz, cache=cache) as (pilot, app):

        def no_reading(*args, **kwargs):
            raise AssertionError("the file was read again on the UI thread")

        monkeypatch.setattr(args_module, "read_source", no_reading)
        await pilot.press("right", "enter")  # a slice with args
        details = str(app.query_one(SliceDetails).render())
        assert "External id" in details or "correlation" in details


def test_the_header_names_the_gpus_the_trace_uses_not_the_whole_node(tmp_path):
    import json

    from tui.widgets.trace_summary import describe

    events = json.loads((DATA / "gpu_streams.json").read_text())
    events["deviceProperties"] = [{"id": i, "name": "NVIDIA B200"} for i in range(8)]
    path = tmp_path / "rank.json"
    path.write_text(json.dumps(events))
    assert describe(load_trace(path)).endswith("NVIDIA B200 (of 8 in the node)")


async def test_standard_input_is_called_so_not_by_its_spool_file(tmp_path):
    from tui.cli import make_app

    spool = tmp_path / "trace-tui-stdin-abc123.json"
    spool.write_bytes((DATA / "gpu_streams.json").read_bytes())
    app = make_app(spool, None, "standard input")
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        header = str(app.query_one(TraceSummary).render())
    assert header.startswith("standard input · ") and "abc123" not in header
