"""Lane labels lead with the thread's name, and the gutter grows to hold the longest one."""

from __future__ import annotations

import json

import pytest

from tests.tui.helpers import loaded
from tui.model.ingest.lanes import LaneKey, lane_name
from tui.widgets.timeline import Timeline


@pytest.mark.parametrize(
    ("key", "meta", "name"),
    [
        (LaneKey(1, 103, "cpu"), {"name": "thread 103 (m995)"}, "m995 103"),  # Kineto's label
        (LaneKey(1, 416, "cpu"), {"name": "python3"}, "python3 416"),
        (LaneKey(1, 7, "cpu"), {}, "thread 7"),
        (LaneKey(1, 7, "cpu"), {"name": "7"}, "thread 7"),
        (LaneKey(0, 7, "gpu"), {}, "stream 7"),
        (LaneKey(0, 7, "gpu"), {"name": "stream 7 "}, "stream 7"),
        (LaneKey(1, "main", "cpu"), {"name": "loader"}, "loader main"),
    ],
)
def test_a_lane_is_named_name_first(key, meta, name):
    assert lane_name(key, meta) == name


async def test_at_100_columns_threads_named_alike_keep_their_names(tmp_path):
    events = []
    for k, tid in enumerate((101, 102, 103)):
        label = f"thread {tid} (m99{k}_decode_worker)"
        events.append(
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": label}}
        )
        events.append({"ph": "X", "name": "work", "cat": "cpu_op", "pid": 1, "tid": tid,
                       "ts": 1000 * k, "dur": 500})  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    async with loaded(path, (100, 30)) as (_, app):
        timeline = app.query_one(Timeline)
        lines = [timeline.render_line(y).text for y in range(timeline.view_height)]
        for k, tid in enumerate((101, 102, 103)):
            assert any(f"m99{k}_decode_worker {tid} " in line for line in lines), lines
        assert timeline.gutter_width <= 100 // 3
