"""Launch links (CPU launch -> GPU work) and other flows, from flow events and correlation ids.

One flow start may have many ends (a CUDA graph launch starts hundreds of kernels), so an end
never closes the flow. Kineto also writes a `correlation` arg on both the launch and the GPU
work, which links them when no flow event does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ..intervals import bind
from ..patterns import (
    EXTERNAL_ID_OWNER_CATEGORIES,
    GRAPH_DEPENDENCY_FLOW_ID,
    LAUNCH_FLOW_CATEGORIES,
    is_runtime_category,
)
from ..trace import Links, Slices
from .intermediate import FLOW_SRC, Collected

I64 = npt.NDArray[np.int64]


def build_links(
    out: Collected,
    slices: Slices,
    lane: I64,
    lane_lo: I64,
    lane_hi: I64,
    corr: I64,
    x_rows: I64,
    flow_ts: I64,
    is_gpu_lane: npt.NDArray[np.bool_],
    nested: Callable[[], object] | None = None,
) -> tuple[Links, Links]:
    """(launch links, other flows). Rows are sorted-slice rows; `lane` is each row's lane id.

    Args:
        lane_lo: first row of each lane id; lane_hi: one past its last.
        corr: each row's correlation arg (-1 for none).
        x_rows: the sorted row of each X event, in collection order (for v2 bind ids).
        flow_ts: times of the flow events (ns).
        is_gpu_lane: per lane id.
        nested: waits until `slices.depth` and `slices.parent` are filled in, where they are
            being found in another thread.
    """
    parts: list[tuple[I64, I64, I64, I64, I64]] = []  # group, ts, role, row, cat
    launch_cats = [
        i for i, c in enumerate(out.cats.values) if str(c).lower() in LAUNCH_FLOW_CATEGORIES
    ]
    runtime_cat = np.asarray([is_runtime_category(str(c)) for c in out.cats.values] + [False])
    calls = np.flatnonzero((corr >= 0) & ~is_gpu_lane[lane] & runtime_cat[slices.cat])
    dependencies = np.zeros(0, np.int64)  # flow groups of CUDA graph dependencies
    if len(out.flows):
        flow_corr = out.flows.get("corr", np.int64)
        dependencies = np.unique(
            out.flows.get("key", np.int64)[flow_corr >= GRAPH_DEPENDENCY_FLOW_ID]
        )
        row = bind(
            out.flows.get("lane", np.int64),
            flow_ts,
            out.flows.get("enclosing", bool),
            lane_lo,
            lane_hi,
            slices.start,
            slices.end,
            slices.parent,
            nested,
        )
        _starts_at_their_launch(
            row,
            np.where(flow_corr < GRAPH_DEPENDENCY_FLOW_ID, flow_corr, -1),
            np.isin(out.flows.get("cat", np.int64), launch_cats)
            & ((out.flows.get("role", np.int64) & FLOW_SRC) > 0),
            calls,
            corr,
        )
        parts.append(
            (
                out.flows.get("key", np.int64),
                flow_ts,
                out.flows.get("role", np.int64),
                row,
                out.flows.get("cat", np.int64),
            )
        )
    if len(out.binds):
        row = x_rows[out.binds.get("row", np.int64)]
        parts.append(
            (
                out.binds.get("key", np.int64),
                slices.start[row],
                out.binds.get("role", np.int64),
                row,
                slices.cat[row].astype(np.int64),
            )
        )
    empty = np.zeros(0, np.int64)
    src = dst = cat = link_group = empty
    if parts:
        # One kind of point (a Kineto trace has no bind ids) is used as it is, not copied: this
        # is the load's peak.
        group, ts, role, row, point_cat = (
            np.concatenate(p) if len(p) > 1 else p[0] for p in zip(*parts, strict=True)
        )
        src, dst, link_group = link(group, ts, role, row)
        # Group keys are sparse (packed ids): look each link's category up by sorted key.
        keys, first = np.unique(group, return_index=True)
        cat = point_cat[first][np.searchsorted(keys, link_group)]
    is_launch = np.isin(cat, launch_cats) & is_gpu_lane[lane[dst]] & ~is_gpu_lane[lane[src]]
    is_launch &= ~np.isin(link_group, dependencies)
    launches = _with_correlated(
        slices, lane, corr, is_gpu_lane, calls, src[is_launch], dst[is_launch], cat[is_launch]
    )
    flows = Links(
        src[~is_launch].astype(np.int32),
        dst[~is_launch].astype(np.int32),
        cat[~is_launch].astype(np.int32),
    )
    return launches, flows


def _starts_at_their_launch(
    row: I64, flow_corr: I64, is_start: npt.NDArray[np.bool_], calls: I64, corr: I64
) -> None:
    """Launch flow starts bound by time can hit the wrong call: a zero-length
    `cudaFuncSetAttribute` in the same microsecond as the `cudaLaunchKernel` after it. Where the
    flow's id is the correlation of exactly one launch call, bind to that call instead."""
    pick = np.flatnonzero(is_start & (flow_corr >= 0))
    if len(pick) == 0 or len(calls) == 0:
        return
    by_corr, found = correlate(calls, corr[calls], pick, flow_corr[pick])
    row[found] = by_corr


def _with_correlated(
    slices: Slices,
    lane: I64,
    corr: I64,
    is_gpu_lane: npt.NDArray[np.bool_],
    calls: I64,
    src: I64,
    dst: I64,
    cat: I64,
) -> Links:
    """GPU work that no flow reached joins its launch call (`calls`: runtime calls with a
    correlation) through the `correlation` arg."""
    gpu = np.flatnonzero((corr >= 0) & is_gpu_lane[lane])
    gpu = gpu[~np.isin(gpu, dst)]
    c_src, c_dst = correlate(calls, corr[calls], gpu, corr[gpu])
    return Links(
        np.concatenate((src, c_src)).astype(np.int32),
        np.concatenate((dst, c_dst)).astype(np.int32),
        np.concatenate((cat, slices.cat[c_src].astype(np.int64))).astype(np.int32),
    )


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
    if not keep.all():
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


def external_links(
    out: Collected,
    slices: Slices,
    lane: I64,
    ext: I64,
    is_gpu_lane: npt.NDArray[np.bool_],
    launches: Links,
) -> Links:
    """Pairs (op, GPU work) joined by equal `External id`, where exactly one op carries it.

    GPU work that carries no id of its own takes its launch's. Rows are sorted-slice rows;
    `lane` is each row's lane id.
    """
    owner_cat = np.asarray(
        [str(c).lower() in EXTERNAL_ID_OWNER_CATEGORIES for c in out.cats.values] + [False]
    )
    gpu = is_gpu_lane[lane]
    work_ext = ext.copy()
    missing = work_ext[launches.dst] < 0
    work_ext[launches.dst[missing]] = ext[launches.src[missing]]
    ops = np.flatnonzero((ext >= 0) & ~gpu & owner_cat[slices.cat])
    work = np.flatnonzero((work_ext >= 0) & gpu)
    src, dst = correlate(ops, ext[ops], work, work_ext[work])
    return Links(src.astype(np.int32), dst.astype(np.int32), slices.cat[src])


def correlate(cpu_rows: I64, cpu_corr: I64, gpu_rows: I64, gpu_corr: I64) -> tuple[I64, I64]:
    """Pairs (launch row, GPU row) joined by equal `correlation`, where the launch is unique."""
    values, counts = np.unique(cpu_corr, return_counts=True)
    mask = np.isin(cpu_corr, values[counts == 1])
    cpu_rows, cpu_corr = cpu_rows[mask], cpu_corr[mask]
    if len(cpu_rows) == 0 or len(gpu_rows) == 0:  # also when every value is taken twice
        empty = np.zeros(0, np.int64)
        return empty, empty
    order = np.argsort(cpu_corr)
    cpu_rows, cpu_corr = cpu_rows[order], cpu_corr[order]
    pos = np.searchsorted(cpu_corr, gpu_corr)
    pos_c = np.minimum(pos, len(cpu_corr) - 1)
    hit = (pos < len(cpu_corr)) & (cpu_corr[pos_c] == gpu_corr)
    return cpu_rows[pos_c[hit]], gpu_rows[hit]
