"""What the timeline draws: each lane in one of three shapes, and the display rows.

A lane is drawn
- in full: one row per nesting level (`Trace.slices.depth`);
- folded: its Python frames (`python_function`, recorded with `with_stack=True`) give way to one
  row holding the innermost frame running at each moment, and everything else (annotations,
  ops, runtime calls) is nested again among itself below that row. The 40 levels of frames of a
  with_stack trace become one row; the ops keep their order and their launches stay on screen;
- collapsed: one row, the union of its slices (on a GPU stream, of its work: the annotations
  are left out; on a thread with Python frames, of the rest), each stretch named by its first
  slice.

Pinned lanes are drawn above the rest, which scroll.
"""

from __future__ import annotations

import msgspec
import numpy as np
import numpy.typing as npt

from ..analysis.memory import counter_series
from ..nesting import nest
from ..patterns import BOOKKEEPING_NAME
from ..trace import Trace

I64 = npt.NDArray[np.int64]
I16 = npt.NDArray[np.int16]

FULL, FOLDED, COLLAPSED = "full", "folded", "collapsed"
PYTHON_CATEGORY = "python_function"
GPU_ANNOTATION_CATEGORY = "gpu_user_annotation"


class DisplayRow(msgspec.Struct, frozen=True):
    """One line of the timeline: a process header, one row of a lane, or a counter."""

    process: int
    lane: int  # -1 for a process header or a counter
    level: int  # the row inside the lane as it is drawn
    counter: int = -1  # into counter_series(trace)
    pinned: bool = False
    group: tuple[int, ...] = ()  # lanes drawn together in this one row (streams left unpinned)


class RowSlices(msgspec.Struct, frozen=True):
    """The slices of one row, sorted by start (and so by end)."""

    rows: I64  # slice rows in Trace.slices
    start: I64
    end: I64  # a collapsed row's stretch ends where its last slice does
    busy_before: I64  # busy_before[k]: total duration of the first k slices
    zero_starts: I64  # starts of the zero-length slices, which take no busy time but show

    def busy(self, t: I64) -> I64:
        """Busy time in [-inf, t) for each t."""
        k = np.searchsorted(self.start, t, side="right") - 1
        kc = np.maximum(k, 0)
        inside = np.minimum(t - self.start[kc], self.end[kc] - self.start[kc])
        return np.where(k >= 0, self.busy_before[kc] + inside, 0)


class Shape(msgspec.Struct, frozen=True):
    """A lane in one shape: each of its slices' row (-1: not drawn), and how many rows."""

    level: I16  # by lane-local slice index
    rows: int
    ends: I64 | None  # collapsed: the end of the stretch each drawn slice heads


class LaneRows:
    """Each lane's shape (the user's choice, else the default) and its rows' slices."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        cats = trace.categories
        self._python = np.isin(
            trace.slices.cat, [i for i, c in enumerate(cats) if c == PYTHON_CATEGORY]
        )
        self._annotation = np.isin(
            trace.slices.cat, [i for i, c in enumerate(cats) if c == GPU_ANNOTATION_CATEGORY]
        )
        self._shapes: dict[tuple[int, str], Shape] = {}
        self._rows: dict[tuple[int, str, int], RowSlices] = {}
        self._groups: dict[tuple[int, ...], RowSlices] = {}
        self.modes: dict[int, str] = {
            lane.index: self.default_mode(lane.index) for lane in trace.lanes
        }

    def default_mode(self, lane_index: int) -> str:
        """Folded where Python frames would take rows, collapsed for bookkeeping lanes."""
        lane = self.trace.lanes[lane_index]
        if is_bookkeeping(self.trace, lane_index) and lane.rows > 1:
            return COLLAPSED
        if (
            self._python[lane.lo : lane.hi].any()
            and self.shape(lane_index, FOLDED).rows < lane.rows
        ):
            return FOLDED
        return FULL

    def has_python(self, lane_index: int) -> bool:
        lane = self.trace.lanes[lane_index]
        return bool(self._python[lane.lo : lane.hi].any())

    def mode(self, lane_index: int) -> str:
        return self.modes[lane_index]

    def count(self, lane_index: int) -> int:
        """Rows the lane takes now."""
        return max(self.shape(lane_index, self.modes[lane_index]).rows, 1)

    def level_of(self, row: int) -> int:
        """The row slice `row` is drawn on in its lane now, -1 when its lane's shape hides it."""
        lane = self.trace.lane_of(row)
        return int(self.shape(lane.index, self.modes[lane.index]).level[row - lane.lo])

    def get(self, lane_index: int, level: int) -> RowSlices:
        mode = self.modes[lane_index]
        key = (lane_index, mode, level)
        found = self._rows.get(key)
        if found is None:
            found = self._rows[key] = self._build(lane_index, mode, level)
        return found

    def group(self, lanes: tuple[int, ...]) -> RowSlices:
        """One row of the work of several lanes together: the union of their collapsed rows,
        each stretch named by its first slice."""
        found = self._groups.get(lanes)
        if found is None:
            parts = [self._build(lane, COLLAPSED, 0) for lane in lanes]
            rows = np.concatenate([p.rows for p in parts]) if parts else np.zeros(0, np.int64)
            start = np.concatenate([p.start for p in parts]) if parts else rows
            end = np.concatenate([p.end for p in parts]) if parts else rows
            order = np.lexsort((-end, start))
            rows, start, end = rows[order], start[order], end[order]
            keep = np.ones(len(rows), bool)
            if len(rows):
                reach = np.maximum.accumulate(end)
                keep[1:] = start[1:] >= reach[:-1]
                heads = np.flatnonzero(keep)
                end = np.maximum.reduceat(end, heads) if len(heads) else end
                rows, start = rows[heads], start[heads]
            busy_before = np.concatenate(([0], np.cumsum(end - start)))[:-1].astype(np.int64)
            found = self._groups[lanes] = RowSlices(
                rows, start, end, busy_before, start[end == start]
            )
        return found

    def shape(self, lane_index: int, mode: str) -> Shape:
        key = (lane_index, mode)
        found = self._shapes.get(key)
        if found is None:
            lane = self.trace.lanes[lane_index]
            if mode == FOLDED:
                found = self._folded(lane.lo, lane.hi)
            elif mode == COLLAPSED:
                found = self._collapsed(lane.lo, lane.hi, lane.kind == "gpu")
            else:
                found = Shape(self.trace.slices.depth[lane.lo : lane.hi], lane.rows, None)
            self._shapes[key] = found
        return found

    def _build(self, lane_index: int, mode: str, level: int) -> RowSlices:
        lane = self.trace.lanes[lane_index]
        shape = self.shape(lane_index, mode)
        local = np.flatnonzero(shape.level == level)
        rows = (local + lane.lo).astype(np.int64)
        start = self.trace.slices.start[rows]
        end = shape.ends[local] if shape.ends is not None else self.trace.slices.end[rows]
        busy_before = np.concatenate(([0], np.cumsum(end - start)))[:-1].astype(np.int64)
        return RowSlices(rows, start, end, busy_before, start[end == start])

    def _folded(self, lo: int, hi: int) -> Shape:
        s = self.trace.slices
        python = self._python[lo:hi]
        start, end = s.start[lo:hi], s.end[lo:hi]
        parent = np.where(s.parent[lo:hi] >= 0, s.parent[lo:hi] - lo, -1)
        # Frames with a frame somewhere under them: walk up from every frame, stopping where an
        # earlier walk already went (it carries on from there itself).
        covered = np.zeros(hi - lo, bool)
        up = parent[python]
        up = up[up >= 0]
        while len(up):
            up = np.unique(up)
            up = up[~covered[up]]
            covered[up] = True
            up = parent[up]
            up = up[up >= 0]
        level = np.full(hi - lo, -1, np.int16)
        leaves = np.flatnonzero(python & ~covered)
        if len(leaves):
            # Innermost frames never hold one another, except where partial overlaps made the
            # tree: one held by an earlier frame of the row stays hidden until expanded.
            reach = np.maximum.accumulate(end[leaves])
            keep = np.ones(len(leaves), bool)
            keep[1:] = end[leaves][1:] >= reach[:-1]
            level[leaves[keep]] = 0
        rest = np.flatnonzero(~python)
        nested = nest(start[rest], end[rest] - start[rest])
        top = 1 if len(leaves) else 0
        level[rest] = nested.depth + top
        return Shape(level, top + nested.rows, None)

    def _collapsed(self, lo: int, hi: int, gpu: bool) -> Shape:
        s = self.trace.slices
        local = np.arange(hi - lo)
        # Left out where something else is there: a stream's annotations (its work is what
        # runs), a thread's Python frames (the outermost would cover the whole row).
        aside = self._annotation[lo:hi] if gpu else self._python[lo:hi]
        if not aside.all():
            local = local[~aside]
        level = np.full(hi - lo, -1, np.int16)
        ends = np.zeros(hi - lo, np.int64)
        if len(local):
            start, end = s.start[lo:hi][local], s.end[lo:hi][local]
            reach = np.maximum.accumulate(end)
            head = np.ones(len(local), bool)
            head[1:] = start[1:] >= reach[:-1]  # starts once everything before it has ended
            at = np.flatnonzero(head)
            level[local[at]] = 0
            ends[local[at]] = np.maximum.reduceat(end, at)
        return Shape(level, 1, ends)


def is_bookkeeping(trace: Trace, lane_index: int) -> bool:
    """Kineto's own lanes (its spans, the profiler's threads): kept out of the way."""
    lane = trace.lanes[lane_index]
    process = trace.processes[lane.process]
    return any(BOOKKEEPING_NAME.search(str(name)) for name in (lane.name, process.pid))


def layout(
    trace: Trace, lanes: LaneRows, pinned: tuple[int, ...] = (), grouped: tuple[int, ...] = ()
) -> list[DisplayRow]:
    """Display rows: the pinned lanes first (then one pinned row of the `grouped` lanes' work
    together), then each process's header, its other lanes and its counters."""
    out = [
        DisplayRow(trace.lanes[lane].process, lane, level, pinned=True)
        for lane in pinned
        for level in range(lanes.count(lane))
    ]
    if grouped:
        out.append(DisplayRow(-1, -1, 0, pinned=True, group=grouped))
    first = trace.processes[0].index if trace.processes else -1
    series = counter_series(trace)
    for process in trace.processes:
        body = [
            DisplayRow(process.index, lane, level)
            for lane in process.lanes
            if lane not in pinned
            for level in range(lanes.count(lane))
        ]
        # Counters of the process (those of no known process go with the first one).
        body += [
            DisplayRow(process.index, -1, 0, i)
            for i, c in enumerate(series)
            if (c.process == process.index or (c.process < 0 and process.index == first))
            and bool(c.values.any())  # a series that never leaves zero gets no row
        ]
        if body or not process.lanes:
            out.append(DisplayRow(process.index, -1, 0))
            out += body
    if not trace.processes:  # counters alone
        out += [DisplayRow(-1, -1, 0, i) for i in range(len(series))]
    return out
