"""Every move that changes the selection brings it into view, and row moves (j/k, up/down)
pick the slice nearest the view's centre, held inside the selection."""

from __future__ import annotations

import json

from tests.tui.helpers import loaded
from tui.widgets.timeline import Timeline

MS = 1_000_000


def _trace(tmp_path):
    """A 1 s `step` on thread 1 holding 100 `op` children of 5 ms, one every 10 ms."""
    cpu = {"pid": 1, "tid": 1}
    events = [
        {"ph": "X", "name": "step", "cat": "user_annotation", **cpu, "ts": 0, "dur": 1_000_000}
    ]
    events += [
        {
            "ph": "X",
            "name": f"op{k}",
            "cat": "cpu_op",
            **cpu,
            "ts": 10_000 * k + 2_000,
            "dur": 5_000,
        }
        for k in range(100)
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def _in_view(t: Timeline, row: int) -> bool:
    start, end = int(t.trace.slices.start[row]), int(t.trace.slices.end[row])
    return start < t.window[1] and end > t.window[0]


async def _zoomed(pilot, t: Timeline, name: str, window: tuple[int, int]) -> int:
    """Slice `name` selected, then the view at `window`: the slice's row."""
    row = next(r for r in range(len(t.trace.slices)) if t.trace.slice_name(r) == name)
    t.select(row)
    await pilot.pause()
    t.set_window(window)
    await pilot.pause()
    return row


async def test_down_from_a_wide_slice_picks_the_child_in_view(tmp_path):
    async with loaded(_trace(tmp_path), (120, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        # Zoomed in far from the step's middle (500 ms).
        step = await _zoomed(pilot, t, "step", (600 * MS, 650 * MS))
        await pilot.press("j")
        assert t.selected != step and _in_view(t, t.selected), t.trace.slice_name(t.selected)
        assert t.trace.slice_name(t.selected) in ("op62", "op61", "op63")
        await pilot.press("k")  # back up: the step, still in view
        assert t.selected == step and t.window == (600 * MS, 650 * MS)


async def test_a_move_to_a_slice_out_of_view_pans_to_it(tmp_path):
    async with loaded(_trace(tmp_path), (120, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        await _zoomed(pilot, t, "op10", (100 * MS, 112 * MS))
        for _ in range(5):  # right, right...: each next op lies past the 12 ms view
            await pilot.press("right")
            assert _in_view(t, t.selected), (t.trace.slice_name(t.selected), t.window)
        width = t.window[1] - t.window[0]
        assert width == 12 * MS  # panned, not zoomed
