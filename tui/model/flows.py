"""Binding flow events to slices, and linking CPU launches to the GPU work they started.

Chrome's rules: a flow start (`s`) and step (`t`) bind to the slice that encloses them on their
thread; a flow end (`f`) binds to the enclosing slice when it says `bp: "e"`, else to the next
slice that starts on its thread. One start may have many ends (a CUDA graph launch starts hundreds
of kernels), so an end never closes the flow. Kineto also writes a `correlation` arg on both the
launch and the GPU work, which links them when no flow event does.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
BoolA = npt.NDArray[np.bool_]


def bind(
    lane: I64,
    ts: I64,
    enclosing: BoolA,
    lane_lo: I64,
    lane_hi: I64,
    start: I64,
    end: I64,
    parent: I64,
) -> I64:
    """The slice each point binds to (-1 for none).

    Args:
        lane: each point's lane.
        ts: each point's time.
        enclosing: bind to the enclosing slice (else to the next slice to start).
        lane_lo: first slice row of each lane; lane_hi: one past its last.
        start: slice starts, sorted within each lane; end: slice ends.
        parent: each slice's enclosing slice (global rows), -1 for none.
    """
    lo = lane_lo[lane]
    hi = lane_hi[lane]
    result = np.full(len(ts), -1, np.int64)
    for lane_id in np.unique(lane):
        pick = np.flatnonzero(lane == lane_id)
        a, b = int(lane_lo[lane_id]), int(lane_hi[lane_id])
        starts = start[a:b]
        t = ts[pick]
        after = np.searchsorted(starts, t, side="right") - 1 + a  # last slice starting <= t
        nxt = np.searchsorted(starts, t, side="left") + a  # first slice starting >= t
        result[pick] = np.where(enclosing[pick], after, np.where(nxt < b, nxt, -1))
    # Walk up from the last slice that started until one contains the point.
    walk = np.flatnonzero(enclosing & (result >= lo) & (result < hi))
    result[enclosing & ~((result >= lo) & (result < hi))] = -1
    while len(walk):
        row = result[walk]
        inside = (start[row] <= ts[walk]) & (ts[walk] <= end[row])
        walk = walk[~inside]
        up = parent[result[walk]]
        result[walk] = up
        walk = walk[up >= 0]
    return result


def link(group: I64, ts: I64, role: I64, row: I64) -> tuple[I64, I64, I64]:
    """Pairs (source row, destination row, group) from flow points.

    Each destination joins the latest source before it in its group (points at one time: the
    destination first, so a step continues a flow), or else the group's first source.

    Args:
        group: the flow each point belongs to.
        ts: point times.
        role: 1 source, 2 destination, 3 both (a step, or a v2 slice with flow_in and flow_out).
        row: the slice each point is bound to (-1 for none; such points are left out).
    """
    keep = row >= 0
    group, ts, role, row = group[keep], ts[keep], role[keep], row[keep]
    if len(row) == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    order = np.lexsort((-(role & 2), ts, group))
    group, role, row = group[order], role[order], row[order]
    n = len(row)
    idx = np.arange(n)
    is_src = (role & 1) > 0
    is_dst = (role & 2) > 0
    # Latest source strictly before each point, within the same group.
    src_pos = np.where(is_src, idx, -1)
    latest = np.maximum.accumulate(src_pos)
    before = np.concatenate(([-1], latest[:-1]))
    same = before >= 0
    same[same] = group[before[same]] == group[same]
    # Fallback: the group's first source, even if it comes later (clock skew).
    first_src = np.full(n, -1, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    src_idx = np.flatnonzero(is_src)
    if len(src_idx):
        pos = np.searchsorted(src_idx, starts)
        ok = pos < len(src_idx)
        cand = np.where(ok, src_idx[np.minimum(pos, len(src_idx) - 1)], -1)
        ok &= cand >= 0
        ok[ok] = group[cand[ok]] == group[starts[ok]]
        per_group = np.where(ok, cand, -1)
        first_src = per_group[np.searchsorted(starts, idx, side="right") - 1]
    src = np.where(same, before, first_src)
    use = is_dst & (src >= 0)
    src_rows, dst_rows, link_group = row[src[use]], row[use], group[use]
    differ = src_rows != dst_rows
    return src_rows[differ], dst_rows[differ], link_group[differ]


def correlate(cpu_rows: I64, cpu_corr: I64, gpu_rows: I64, gpu_corr: I64) -> tuple[I64, I64]:
    """Pairs (launch row, GPU row) joined by equal `correlation`, where the launch is unique."""
    if len(cpu_rows) == 0 or len(gpu_rows) == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty
    values, counts = np.unique(cpu_corr, return_counts=True)
    unique_values = values[counts == 1]
    mask = np.isin(cpu_corr, unique_values)
    cpu_rows, cpu_corr = cpu_rows[mask], cpu_corr[mask]
    order = np.argsort(cpu_corr)
    cpu_rows, cpu_corr = cpu_rows[order], cpu_corr[order]
    pos = np.searchsorted(cpu_corr, gpu_corr)
    pos_c = np.minimum(pos, len(cpu_corr) - 1)
    hit = (pos < len(cpu_corr)) & (cpu_corr[pos_c] == gpu_corr)
    return cpu_rows[pos_c[hit]], gpu_rows[hit]
