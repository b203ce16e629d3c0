"""Whole screens as text at fixed sizes, compared with tests/snapshots/*.txt.

Text, not SVG, so a change shows in a diff as a user would see it. After a deliberate change of
the look, look at the new text and run with SNAPSHOT_UPDATE=1 to store it.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import DATA
from tests.tui.helpers import loaded
from tui.screens.help import HelpScreen
from tui.widgets.slice_details import SliceDetails
from tui.widgets.time_ruler import TimeRuler
from tui.widgets.timeline import Timeline

SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots"


def screen_text(app) -> str:
    timeline = app.query_one(Timeline)
    lines = [str(app.query_one(TimeRuler).render())]
    lines += [timeline.render_line(y).text for y in range(timeline.size.height)]
    lines += ["-" * timeline.size.width, str(app.query_one(SliceDetails).render())]
    return "\n".join(line.rstrip() for line in "\n".join(lines).splitlines()) + "\n"


def check(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("SNAPSHOT_UPDATE"):
        path.write_text(text)
    assert path.exists(), f"no snapshot {path}: look at the screen, then SNAPSHOT_UPDATE=1"
    assert text == path.read_text(), f"screen differs from {path}"


async def test_gpu_trace_at_full_zoom_out():
    async with loaded(DATA / "gpu_streams.json", (100, 24)) as (_, app):
        check("gpu_full_zoom_out", screen_text(app))


async def test_zoomed_in_with_a_kernel_selected():
    async with loaded(DATA / "gpu_streams.json", (100, 30)) as (pilot, app):
        await pilot.press("right", "enter", "right_square_bracket", "f")
        await pilot.pause()
        check("gpu_kernel_selected", screen_text(app))


async def test_help_screen():
    async with loaded(DATA / "gpu_streams.json", (80, 40)) as (pilot, app):
        await pilot.press("question_mark")
        await pilot.pause()
        help_text = str(app.screen.query_one("Static").render())
        assert isinstance(app.screen, HelpScreen)
        check("help", help_text.rstrip() + "\n")
