"""Each timeline row's slices turned into terminal cells.

Within one lane and depth, slices never overlap (nesting puts children one row down and partly
overlapping slices on rows of their own), so a row's slices are sorted by both start and end, and
a prefix sum of their durations gives the busy time of any interval with two binary searches.
A frame therefore costs O(width x log n) per row, whatever the zoom.
"""

from __future__ import annotations

import msgspec
import numpy as np
import numpy.typing as npt

from ..analysis.gaps import Gaps
from .rows import RowSlices

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


class Cells(msgspec.Struct, frozen=True):
    """One row rasterised. Per cell: the slice under its middle (or -1), how busy it is (0..1),
    how many slices touch it, and one slice that does (for its colour; meaningless if none)."""

    slice: I64
    busy: F64
    count: I64
    near: I64


SPARK = " ▁▂▃▄▅▆▇█"


# A memory row's bars are scaled to at least this: an allocator series of a few bytes (a CPU
# scalar) would otherwise fill its row as if memory were full.
MEMORY_SCALE_FLOOR = float(1 << 20)


def sparkline(
    ts: I64, values: F64, t0: int, t1: int, width: int, floor: float = 0.0
) -> tuple[str, F64]:
    """A counter over [t0, t1) as block characters scaled to its highest value in view, or to
    `floor` where that is higher (so a few bytes never draw as a full row), and that value per
    cell (the highest the counter reached in the cell)."""
    edges = t0 + (np.arange(width + 1, dtype=np.float64) * ((t1 - t0) / width)).astype(np.int64)
    if len(ts) == 0:
        return " " * width, np.zeros(width)
    at_start = np.searchsorted(ts, edges[:-1], side="right") - 1
    value = np.where(at_start >= 0, values[np.maximum(at_start, 0)], 0.0)
    first = np.searchsorted(ts, edges[:-1], side="left")
    last = np.searchsorted(ts, edges[1:], side="left")
    for cell in np.flatnonzero(last > first).tolist():
        value[cell] = max(value[cell], float(values[first[cell] : last[cell]].max()))
    top = max(float(value.max()) if len(value) else 0.0, floor)
    if top <= 0:
        return "".join(SPARK[1] if v < 0 else " " for v in value), value
    levels = np.clip(np.ceil(value / top * (len(SPARK) - 1)), 0, len(SPARK) - 1).astype(int)
    return "".join(SPARK[k] for k in levels.tolist()), value


def rasterise(row: RowSlices, t0: int, t1: int, width: int) -> Cells:
    """Turn a row's slices in [t0, t1) into `width` cells."""
    edges = t0 + (np.arange(width + 1, dtype=np.float64) * ((t1 - t0) / width)).astype(np.int64)
    if len(row.rows) == 0:
        none = np.full(width, -1, np.int64)
        return Cells(none, np.zeros(width), np.zeros(width, np.int64), none)
    busy_at = row.busy(edges)
    cell_ns = np.maximum(np.diff(edges), 1)
    busy = np.clip(np.diff(busy_at) / cell_ns, 0.0, 1.0)
    a, b = edges[:-1], edges[1:]
    # Slices touching [a, b): started before b, not ended by a; a zero-length one at a counts.
    count = np.searchsorted(row.start, b, side="left") - np.searchsorted(row.end, a, side="right")
    zs = row.zero_starts
    count += np.searchsorted(zs, a, side="right") - np.searchsorted(zs, a, side="left")
    middle = (a + b) // 2
    k = np.searchsorted(row.start, middle, side="right") - 1
    kc = np.maximum(k, 0)
    # A slice under the middle is drawn as a bar when it is alone in the cell or spans a cell:
    # a cell crowded with shorter ones shows how busy it is instead.
    under = (k >= 0) & (row.end[kc] > middle)
    under &= (count <= 1) | (row.end[kc] - row.start[kc] >= cell_ns)
    # A slice starting inside the cell, else the one running into it from the left.
    first_in = np.searchsorted(row.start, a, side="left")
    fc = np.minimum(first_in, len(row.rows) - 1)
    starts_inside = (first_in < len(row.rows)) & (row.start[fc] < b)
    left = np.maximum(np.searchsorted(row.start, a, side="right") - 1, 0)
    near = row.rows[np.where(starts_inside, fc, left)]
    return Cells(np.where(under, row.rows[kc], -1), busy, np.maximum(count, 0), near)


def keep_visible(cells: Cells, row: int, start: int, end: int, t0: int, t1: int) -> Cells:
    """Cells where slice `row` (over [start, end)) shows in every cell it touches: one drawn
    as a bar stays so; in a crowded cell, or under a longer slice's bar, it becomes the cell's
    slice to colour (so the selection is marked even when narrower than a cell)."""
    width = len(cells.slice)
    x0 = max(int((start - t0) * width // max(t1 - t0, 1)), 0)
    x1 = min(int((max(end - 1, start) - t0) * width // max(t1 - t0, 1)), width - 1)
    if x1 < x0:
        return cells
    span = slice(x0, x1 + 1)
    other = cells.slice[span] != row
    slice_of, near, count = cells.slice.copy(), cells.near.copy(), cells.count.copy()
    slice_of[span][other] = -1
    near[span][other] = row
    count[span][other] = np.maximum(count[span][other], 1)
    return Cells(slice_of, cells.busy, count, near)


def slice_at(row: RowSlices, t: int, tolerance: int = 0) -> int:
    """The slice under time `t` on this row, or the nearest within `tolerance` ns, or -1."""
    if len(row.rows) == 0:
        return -1
    k = int(np.searchsorted(row.start, t, side="right")) - 1
    candidates = [c for c in (k, k + 1) if 0 <= c < len(row.rows)]
    best, best_distance = -1, tolerance + 1
    for c in candidates:
        distance = (
            0
            if row.start[c] <= t <= row.end[c]
            else min(abs(int(row.start[c]) - t), abs(int(row.end[c]) - t))
        )
        if distance < best_distance:
            best, best_distance = int(row.rows[c]), distance
    return best


def gap_cells(
    gaps: Gaps, lane: int, t0: int, t1: int, width: int, selected: int = -1
) -> I64 | None:
    """Per cell of a GPU stream's row over [t0, t1), the idle gap under the cell's middle (-1
    for none): the selected gap where it is this stream's, else a whole-device gap (no stream
    busy) where there is one, else the stream's own; None when there is none."""
    lo, hi = np.searchsorted(gaps.lane[: gaps.device_from], [lane, lane + 1])
    if lo == hi and gaps.device_from == len(gaps):
        return None
    middle = t0 + ((np.arange(width) + 0.5) * ((t1 - t0) / width)).astype(np.int64)
    cells = np.full(width, -1, np.int64)
    for first, last in ((lo, hi), (gaps.device_from, len(gaps))):  # the device's win
        if first == last:
            continue
        mine = np.arange(first, last)
        starts, ends = gaps.start[mine], gaps.end[mine]
        k = np.searchsorted(starts, middle, side="right") - 1
        kc = np.maximum(k, 0)
        inside = (k >= 0) & (ends[kc] > middle)
        cells[inside] = mine[kc][inside]
    if lo <= selected < hi:
        cells[(gaps.start[selected] <= middle) & (middle < gaps.end[selected])] = selected
    return cells if (cells >= 0).any() else None
