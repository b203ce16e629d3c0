"""Every slice is drawn, however short: any cell holding part of a slice shows a glyph (a bar
of one or two cells is a solid block, not spaces on a background), and the selection is marked
in every cell it touches; a property test of the raster over random slices and zooms."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from tests.tui.helpers import loaded
from tui.model.present.raster import keep_visible, rasterise
from tui.model.present.rows import RowSlices
from tui.widgets.timeline import Timeline

MS = 1_000_000


def _edges(t0: int, t1: int, width: int) -> np.ndarray:
    return t0 + (np.arange(width + 1, dtype=np.float64) * ((t1 - t0) / width)).astype(np.int64)


async def test_sixteen_lanes_of_one_short_slice_each_are_all_drawn(tmp_path):
    """At 100 columns, 16 lanes each holding one 150 ms slice over 10 s: about one cell each."""
    events = [
        {"ph": "X", "name": f"s{k}", "cat": "cpu_op", "pid": 1, "tid": 100 + k,
         "ts": k * 620_000 + 52_000, "dur": 150_000}
        for k in range(16)
    ]  # fmt: skip
    events.append({"ph": "X", "name": "end", "cat": "cpu_op", "pid": 1, "tid": 200,
                   "ts": 10_000_000, "dur": 1})  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    async with loaded(path, (100, 40)) as (_, app):
        t = app.query_one(Timeline)
        t0, t1 = t.window
        edges = _edges(t0, t1, t.cells_width)
        trace = t.trace
        seen = 0
        for y in range(t.view_height):
            index = t.row_at(y)
            if index < 0 or t.rows[index].lane < 0:
                continue
            lane = trace.lanes[t.rows[index].lane]
            if not lane.slice_count or not trace.slice_name(lane.lo).startswith("s"):
                continue
            cells = t.render_line(y).text[t.gutter_width :]
            start, end = int(trace.slices.start[lane.lo]), int(trace.slices.end[lane.lo])
            touched = [x for x in range(len(cells)) if start < edges[x + 1] and end > edges[x]]
            assert touched and all(cells[x] != " " for x in touched), (lane.name, cells)
            seen += 1
        assert seen == 16


def _row(starts: list[int], durs: list[int]) -> RowSlices:
    s, d = np.asarray(starts, np.int64), np.asarray(durs, np.int64)
    before = np.concatenate(([0], np.cumsum(d)))[:-1]
    return RowSlices(np.arange(len(s), dtype=np.int64), s, s + d, before, s[d == 0])


@pytest.mark.parametrize("seed", range(4))
def test_any_cell_touching_a_slice_shows_it_at_any_zoom(seed):
    rng = random.Random(seed)
    for _ in range(150):
        n, span = rng.randint(1, 6), rng.randint(10**5, 10**10)
        starts = sorted(rng.sample(range(span), n))
        gaps = [b - a for a, b in zip(starts, [*starts[1:], span], strict=True)]
        durs = [rng.randint(0, g if rng.random() < 0.5 else max(g // 50, 0)) for g in gaps]
        row = _row(starts, durs)
        t0 = rng.randint(0, span // 2)
        t1, width = rng.randint(t0 + 1, span), rng.randint(20, 250)
        cells, edges = rasterise(row, t0, t1, width), _edges(t0, t1, width)
        for k in range(n):
            s, e = int(row.start[k]), int(row.end[k])
            touched = [
                x
                for x in range(width)
                if (s < edges[x + 1] and e > edges[x]) or (s == e and edges[x] <= s < edges[x + 1])
            ]
            assert all(cells.slice[x] >= 0 or cells.count[x] > 0 for x in touched)
            marked = keep_visible(cells, k, s, e, t0, t1)
            assert all(marked.slice[x] == k or marked.near[x] == k for x in touched)
