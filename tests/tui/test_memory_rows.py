"""Counter rows on the timeline and the jump to peak memory, driven with Pilot."""

from __future__ import annotations

import re

import pytest

from tests.conftest import DATA, SHARED
from tests.tui.helpers import loaded
from tests.tui.test_snapshots import check, screen_text
from tui.widgets.slice_details import SliceDetails
from tui.widgets.timeline import Timeline

TRACE = DATA / "memory_sync.json"


async def test_counter_rows_sit_under_their_process_and_show_values():
    async with loaded(TRACE, (120, 30)) as (pilot, app):
        timeline = app.query_one(Timeline)
        labels = [
            timeline.render_line(y).text[: timeline.gutter_width].strip()
            for y in range(len(timeline.rows))
        ]
        assert labels == [
            "stream 7",  # pinned on top
            "process 1",
            "▾ thread 1",
            "",
            "queue.depth",
            "cpu allocated",  # "cpu reserved" never leaves zero: no row
            "GPU 0",
            "cuda:0 allocated",
            "cuda:0 reserved",
        ]
        spark = timeline.render_line(8).text[timeline.gutter_width :]  # cuda:0 reserved
        bars, scale = spark.rsplit(" max ", 1)
        assert scale.strip() == "2 KiB"  # the highest in view, in bytes
        # A few KiB is drawn against a MiB at least, not as a full row: the lowest bars.
        assert set(bars.strip()) == {"▁"}
        queue = timeline.render_line(4).text[timeline.gutter_width :]  # not bytes: its own max
        assert "█" in queue.rsplit(" max ", 1)[0]
        await pilot.press("down", "down")  # thread 1 depth 1, then the first counter row
        assert timeline.rows[timeline.cursor].counter >= 0
        details = str(app.query_one(SliceDetails).render())
        assert re.search(r"highest\s+4", details) and "queue.depth" in details


async def test_m_jumps_to_the_peak_and_selects_the_op_running_then():
    async with loaded(TRACE, (120, 30)) as (pilot, app):
        await pilot.press("m")
        timeline = app.query_one(Timeline)
        assert timeline.trace.slice_name(timeline.selected) == "alloc"
        assert timeline.window[0] <= 15_000 <= timeline.window[1]
        check("memory_rows", screen_text(app))


@pytest.mark.parametrize(
    "name",
    [
        "tracelens/h100_bert_small.json.gz",
        "kineto/v100_resnet50_w0_span1.1623143089861.pt.trace.json.gz",
        "hta/a100_cuda_event_sync.json.gz",
    ],
)
async def test_real_traces_with_memory_and_sync_render(name):
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"real traces not present: {SHARED} is missing")
    async with loaded(path, (140, 40)) as (pilot, app):
        timeline = app.query_one(Timeline)
        for y in range(len(timeline.rows)):
            assert "cannot draw" not in timeline.render_line(y).text
        await pilot.press("m", "g", "t")
        await pilot.pause()
        assert app.trace is not None and app.return_code is None
