"""Launch links (CPU launch -> GPU work) and other flows, from flow events and correlation ids."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import flows as flowlib
from .collect import Collected
from .patterns import LAUNCH_FLOW_CATEGORIES, is_runtime_category
from .trace import Links, Slices

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
) -> tuple[Links, Links]:
    """(launch links, other flows). Rows are sorted-slice rows; `lane` is each row's lane id.

    Args:
        lane_lo: first row of each lane id; lane_hi: one past its last.
        corr: each row's correlation arg (-1 for none).
        x_rows: the sorted row of each X event, in collection order (for v2 bind ids).
        flow_ts: times of the flow events (ns).
        is_gpu_lane: per lane id.
    """
    parts: list[tuple[I64, I64, I64, I64, I64]] = []  # group, ts, role, row, cat
    if len(out.flows):
        row = flowlib.bind(
            out.flows.get("lane", np.int64),
            flow_ts,
            out.flows.get("enclosing", bool),
            lane_lo,
            lane_hi,
            slices.start,
            slices.end,
            slices.parent.astype(np.int64),
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
    src = dst = cat = empty
    if parts:
        group, ts, role, row, point_cat = (np.concatenate(p) for p in zip(*parts, strict=True))
        src, dst, link_group = flowlib.link(group, ts, role, row)
        # Group keys are sparse (packed ids): look each link's category up by sorted key.
        keys, first = np.unique(group, return_index=True)
        cat = point_cat[first][np.searchsorted(keys, link_group)]
    launch_cats = [
        i for i, c in enumerate(out.cats.values) if str(c).lower() in LAUNCH_FLOW_CATEGORIES
    ]
    is_launch = np.isin(cat, launch_cats) & is_gpu_lane[lane[dst]] & ~is_gpu_lane[lane[src]]
    launches = _with_correlated(
        out, slices, lane, corr, is_gpu_lane, src[is_launch], dst[is_launch], cat[is_launch]
    )
    flows = Links(
        src[~is_launch].astype(np.int32),
        dst[~is_launch].astype(np.int32),
        cat[~is_launch].astype(np.int32),
    )
    return launches, flows


def _with_correlated(
    out: Collected,
    slices: Slices,
    lane: I64,
    corr: I64,
    is_gpu_lane: npt.NDArray[np.bool_],
    src: I64,
    dst: I64,
    cat: I64,
) -> Links:
    """GPU work that no flow reached joins its launch through the `correlation` arg."""
    runtime_cat = np.asarray([is_runtime_category(str(c)) for c in out.cats.values] + [False])
    has = corr >= 0
    on_gpu = is_gpu_lane[lane]
    cpu = np.flatnonzero(has & ~on_gpu & runtime_cat[slices.cat])
    gpu = np.flatnonzero(has & on_gpu)
    gpu = gpu[~np.isin(gpu, dst)]
    c_src, c_dst = flowlib.correlate(cpu, corr[cpu], gpu, corr[gpu])
    return Links(
        np.concatenate((src, c_src)).astype(np.int32),
        np.concatenate((dst, c_dst)).astype(np.int32),
        np.concatenate((cat, slices.cat[c_src].astype(np.int64))).astype(np.int32),
    )
