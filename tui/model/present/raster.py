"""What the timeline shows: display rows, and each row's slices turned into terminal cells.

Within one lane and depth, slices never overlap (nesting puts children one row down and partly
overlapping slices on rows of their own), so a row's slices are sorted by both start and end, and
a prefix sum of their durations gives the busy time of any interval with two binary searches.
A frame therefore costs O(width x log n) per row, whatever the zoom.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..analysis.gaps import Gaps
from ..analysis.memory import counter_series
from ..trace import Trace

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Row:
    """One line of the timeline: a process header, one depth of a lane, or a counter."""

    process: int
    lane: int  # -1 for a process header or a counter
    depth: int
    counter: int = -1  # into counter_series(trace)


@dataclass(frozen=True)
class RowSlices:
    """The slices of one lane at one depth, sorted by start (and so by end)."""

    rows: I64  # slice rows in Trace.slices
    start: I64
    end: I64
    busy_before: I64  # busy_before[k]: total duration of the first k slices
    zero_starts: I64  # starts of the zero-length slices, which take no busy time but show

    def busy(self, t: I64) -> I64:
        """Busy time in [-inf, t) for each t."""
        k = np.searchsorted(self.start, t, side="right") - 1
        kc = np.maximum(k, 0)
        inside = np.minimum(t - self.start[kc], self.end[kc] - self.start[kc])
        return np.where(k >= 0, self.busy_before[kc] + inside, 0)


@dataclass(frozen=True)
class Cells:
    """One row rasterised. Per cell: the slice under its middle (or -1), how busy it is (0..1),
    how many slices touch it, and one slice that does (for its colour; meaningless if none)."""

    slice: I64
    busy: F64
    count: I64
    near: I64


class RowIndex:
    """Per (lane, depth) slice arrays, built when a row is first drawn."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._rows: dict[tuple[int, int], RowSlices] = {}

    def get(self, lane: int, depth: int) -> RowSlices:
        key = (lane, depth)
        found = self._rows.get(key)
        if found is None:
            found = self._rows[key] = self._build(lane, depth)
        return found

    def _build(self, lane_index: int, depth: int) -> RowSlices:
        lane = self.trace.lanes[lane_index]
        s = self.trace.slices
        rows = np.flatnonzero(s.depth[lane.lo : lane.hi] == depth).astype(np.int64) + lane.lo
        start = s.start[rows]
        end = start + s.dur[rows]
        busy_before = np.concatenate(([0], np.cumsum(s.dur[rows])))[:-1].astype(np.int64)
        return RowSlices(rows, start, end, busy_before, start[end == start])


def layout(trace: Trace, collapsed: frozenset[int] = frozenset()) -> list[Row]:
    """Display rows: each process's header, then each of its lanes at every depth.

    A collapsed lane shows its top row only.
    """
    out: list[Row] = []
    first = trace.processes[0].index if trace.processes else -1
    for process in trace.processes:
        out.append(Row(process.index, -1, 0))
        for lane_index in process.lanes:
            lane = trace.lanes[lane_index]
            depths = 1 if lane_index in collapsed else max(lane.rows, 1)
            out.extend(Row(process.index, lane_index, d) for d in range(depths))
        # Counters of the process (those of no known process go with the first one).
        out.extend(
            Row(process.index, -1, 0, i)
            for i, c in enumerate(counter_series(trace))
            if c.process == process.index or (c.process < 0 and process.index == first)
        )
    return out


SPARK = " ▁▂▃▄▅▆▇█"


def sparkline(ts: I64, values: F64, t0: int, t1: int, width: int) -> tuple[str, F64]:
    """A counter over [t0, t1) as block characters scaled to its highest value in view, and
    that value per cell (the highest the counter reached in the cell)."""
    edges = t0 + (np.arange(width + 1, dtype=np.float64) * ((t1 - t0) / width)).astype(np.int64)
    if len(ts) == 0:
        return " " * width, np.zeros(width)
    at_start = np.searchsorted(ts, edges[:-1], side="right") - 1
    value = np.where(at_start >= 0, values[np.maximum(at_start, 0)], 0.0)
    first = np.searchsorted(ts, edges[:-1], side="left")
    last = np.searchsorted(ts, edges[1:], side="left")
    for cell in np.flatnonzero(last > first).tolist():
        value[cell] = max(value[cell], float(values[first[cell] : last[cell]].max()))
    top = float(value.max()) if len(value) else 0.0
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
    under = (k >= 0) & (row.end[kc] > middle)
    # A slice starting inside the cell, else the one running into it from the left.
    first_in = np.searchsorted(row.start, a, side="left")
    fc = np.minimum(first_in, len(row.rows) - 1)
    starts_inside = (first_in < len(row.rows)) & (row.start[fc] < b)
    left = np.maximum(np.searchsorted(row.start, a, side="right") - 1, 0)
    near = row.rows[np.where(starts_inside, fc, left)]
    return Cells(np.where(under, row.rows[kc], -1), busy, np.maximum(count, 0), near)


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
    """Per cell of a row of `lane` over [t0, t1), the stream's idle gap under the cell's middle
    (-1 for none), and the selected gap where it is a whole-device gap ended on this lane; None
    when there is none of either."""
    lo, hi = np.searchsorted(gaps.lane[: gaps.device_from], [lane, lane + 1])
    device = selected >= gaps.device_from and int(gaps.lane[selected]) == lane
    if lo == hi and not device:
        return None
    middle = t0 + ((np.arange(width) + 0.5) * ((t1 - t0) / width)).astype(np.int64)
    cells = np.full(width, -1, np.int64)
    if lo < hi:
        mine = np.arange(lo, hi)
        starts, ends = gaps.start[mine], gaps.end[mine]
        k = np.searchsorted(starts, middle, side="right") - 1
        kc = np.maximum(k, 0)
        cells = np.where((k >= 0) & (ends[kc] > middle), mine[kc], -1)
    if device:
        inside = (gaps.start[selected] <= middle) & (middle < gaps.end[selected])
        cells[inside] = selected
    return cells
