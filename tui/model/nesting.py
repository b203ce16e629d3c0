"""Nesting depth and parents of the slices of one lane.

Real traces have equal starts, zero durations and partial overlaps (a `record_function` that
starts inside the Python frame of its `__enter__` and ends inside that of its `__exit__` under
`with_stack`, a `Stream Sync` that outlasts the memcpy it started in, rounding in older writers).
The rule is torch's own, so that the op table matches `key_averages()`: a slice is the child of
the innermost slice that holds it whole. One that partly overlaps a slice is therefore its
sibling (or a child of one further up), with its own children under it. A slice's row is its
depth in that tree, so only partly overlapping neighbours share time on a row. A row must stay
sorted by both start and end (the raster relies on it); the rare slice that a slice of its own
row holds whole (zero-length slices at the start of a partial overlap can do this) is drawn on
an extra row below the lane's nesting rows instead.
"""

from __future__ import annotations

import msgspec
import numpy as np

from tui.model.arrays import I16, I32, I64


class Nesting(msgspec.Struct, frozen=True):
    """Row and parent (lane-local, -1 for none) of each slice, and the lane's shape."""

    depth: I16
    parent: I32
    levels: int  # nesting levels (1 when nothing nests)
    rows: int  # levels plus the extra rows of slices a slice on their own row holds


def nest(start: I64, dur: I64) -> Nesting:
    """Nest one lane's slices, sorted by start and then longest first."""
    laminar = _nest_laminar(start, dur)
    return laminar if laminar is not None else _nest_sweep(start, dur)


def _nest_laminar(start: I64, dur: I64) -> Nesting | None:
    """Vectorised nesting for a lane whose slices nest properly (most lanes); None if not.

    A slice's depth is the number of earlier slices still open at its start. Zero-length
    slices at the very same start count as closed (as in the sweep).
    """
    n = len(start)
    if n == 0:
        return None
    end = start + dur
    index = np.arange(n, dtype=np.int64)
    closed = np.searchsorted(np.sort(end), start, side="right")
    # Zero-length slices at a slice's own start and sorted after it closed "before" it in the
    # count above, but they come later: take them back out.
    zero_starts = start[dur == 0]
    if len(zero_starts):
        group_end = np.searchsorted(start, start, side="right")
        zeros = np.searchsorted(zero_starts, start, side="right") - np.searchsorted(
            zero_starts, start, side="left"
        )
        closed = closed - (group_end - np.maximum(index, group_end - zeros))
    depth = index - closed
    if depth.min() < 0:
        return None
    parent = np.full(n, -1, np.int64)
    levels = int(depth.max()) + 1
    above = np.flatnonzero(depth == 0)
    for d in range(1, levels):
        here = np.flatnonzero(depth == d)
        pos = np.searchsorted(above, here) - 1
        if (pos < 0).any():
            return None
        parent[here] = above[pos]
        above = here
    has = parent >= 0
    if (end[has] > end[parent[has]]).any():
        return None  # a slice outlives its parent: partial overlap, use the sweep
    if levels > np.iinfo(np.int16).max:
        raise OverflowError("lane nests deeper than 32767 rows")
    return Nesting(depth.astype(np.int16), parent.astype(np.int32), levels, levels)


def _nest_sweep(start: I64, dur: I64) -> Nesting:
    """torch's own stack sweep (EventList._populate_cpu_children): open slices that end at or
    before this one starts, or end before it ends, cannot hold it and are closed; it becomes a
    child of the innermost one left, and is itself opened."""
    n = len(start)
    depth = np.zeros(n, np.int64)
    parent = np.full(n, -1, np.int64)
    if n == 0:
        return Nesting(depth.astype(np.int16), parent.astype(np.int32), 0, 0)
    starts = start.tolist()
    ends = (start + dur).tolist()
    depths = [0] * n
    parents = [-1] * n
    stack: list[int] = []  # the open slices: the chain of ancestors, innermost last
    stack_ends: list[int] = []
    for i in range(n):
        s, e = starts[i], ends[i]
        while stack_ends and (stack_ends[-1] <= s or e > stack_ends[-1]):
            stack.pop()
            stack_ends.pop()
        if stack:
            parents[i] = stack[-1]
        depths[i] = len(stack)
        stack.append(i)
        stack_ends.append(e)
    depth[:] = depths
    parent[:] = parents
    levels = int(depth.max()) + 1
    held = _held_by_their_row(depth, ends)
    rows = _pack_rows(held, starts, ends, depth, levels) if held else levels
    if rows > np.iinfo(np.int16).max:
        raise OverflowError("lane nests deeper than 32767 rows")
    return Nesting(depth.astype(np.int16), parent.astype(np.int32), levels, rows)


def _held_by_their_row(depth: I64, ends: list[int]) -> list[int]:
    """Slices (by start) ending before an earlier slice of their row ends: that one holds them."""
    end = np.asarray(ends, np.int64)
    held: list[int] = []
    for d in np.unique(depth).tolist():
        row = np.flatnonzero(depth == d)
        reach = np.maximum.accumulate(end[row])
        held += row[1:][end[row][1:] < reach[:-1]].tolist()
    return sorted(held)


def _pack_rows(
    rows_of: list[int], starts: list[int], ends: list[int], depth: I64, first: int
) -> int:
    """Give each held slice the first extra row that is free at its start."""
    row_ends: list[int] = []
    for i in rows_of:
        for r, row_end in enumerate(row_ends):
            if row_end <= starts[i]:
                row_ends[r] = ends[i]
                depth[i] = first + r
                break
        else:
            depth[i] = first + len(row_ends)
            row_ends.append(ends[i])
    return first + len(row_ends)
