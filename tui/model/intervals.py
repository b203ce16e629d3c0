"""Interval queries on the columnar slices: which slice a point in time binds to.

Chrome's rules for flow points: a flow start (`s`) and step (`t`) bind to the slice that encloses
them on their thread; a flow end (`f`) binds to the enclosing slice when it says `bp: "e"`, else
to the next slice that starts on its thread. The same query places allocator records in the op
running when they happened.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from tui.model.arrays import I64, Bool


def merge(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intervals sorted by start, merged into sorted disjoint ones."""
    if len(starts) == 0:
        return starts, ends
    reach = np.maximum.accumulate(ends)
    firsts = np.flatnonzero(np.concatenate(([True], starts[1:] > reach[:-1])))
    return starts[firsts], np.maximum.reduceat(ends, firsts)


def bind(
    lane: I64,
    ts: I64,
    enclosing: Bool,
    lane_lo: I64,
    lane_hi: I64,
    start: I64,
    end: I64,
    parent: npt.NDArray[np.integer],
    ready: Callable[[], object] | None = None,
) -> I64:
    """The slice each point binds to (-1 for none).

    Args:
        lane: each point's lane.
        ts: each point's time.
        enclosing: bind to the enclosing slice (else to the next slice to start).
        lane_lo: first slice row of each lane; lane_hi: one past its last.
        start: slice starts, sorted within each lane; end: slice ends.
        parent: each slice's enclosing slice (global rows), -1 for none.
        ready: waits until `parent` is filled in (by another thread); called only when a point
            needs it.
    """
    lo = lane_lo[lane]
    hi = lane_hi[lane]
    result = _candidate_slices(lane, ts, enclosing, lane_lo, lane_hi, start)
    # Walk up from the last slice that started until one contains the point.
    walk = np.flatnonzero(enclosing & (result >= lo) & (result < hi))
    result[enclosing & ~((result >= lo) & (result < hi))] = -1
    while len(walk):
        row = result[walk]
        inside = (start[row] <= ts[walk]) & (ts[walk] <= end[row])
        walk = walk[~inside]
        if len(walk) and ready is not None:
            ready()
            ready = None
        up = parent[result[walk]]
        result[walk] = up
        walk = walk[up >= 0]
    return result


def _candidate_slices(
    lane: I64, ts: I64, enclosing: Bool, lane_lo: I64, lane_hi: I64, start: I64
) -> I64:
    """Per point: the last slice of its lane to start at or before it (enclosing points), or
    the first to start at or after it (the others); -1 for none. Needs no nesting."""
    result = np.full(len(ts), -1, np.int64)
    for lane_id in np.unique(lane):
        pick = np.flatnonzero(lane == lane_id)
        a, b = int(lane_lo[lane_id]), int(lane_hi[lane_id])
        starts = start[a:b]
        t = ts[pick]
        after = np.searchsorted(starts, t, side="right") - 1 + a  # last slice starting <= t
        nxt = np.searchsorted(starts, t, side="left") + a  # first slice starting >= t
        result[pick] = np.where(enclosing[pick], after, np.where(nxt < b, nxt, -1))
    return result
