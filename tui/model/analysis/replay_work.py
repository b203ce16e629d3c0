"""What graph-replayed kernels computed: the FLOPs and bytes of the ops that launched them while
the graph was captured.

Serving engines and compiled runs replay CUDA/HIP graphs: a replay is one launch call and
hundreds of kernels, with no op around each kernel, so the roofline knows none of them. The
capture (the same file, or a trace of the capture phase the user names) holds the ops, their
shapes, and the launches they made between `cudaStreamBeginCapture` and `cudaStreamEndCapture`:
the graph's nodes, in order. The k-th kernel of a replay is the k-th launch of the capture whose
kernel count (and, where the capture's launches name their kernels, as HIP's do, whose kernel
names) match the graph's; its op's FLOPs and bytes become one call of that op per replay, timed
by the kernels the op's launches became.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

import numpy as np

from ..trace import Trace
from .attribution import attribute, op_tree
from .graphs import graphs
from .perf_model import TRITON_PREFIX, work_of
from .roofline import Roofline, ShapeRow, candidates
from .work import Work

BEGIN_CAPTURE = re.compile(r"^(cuda|hip)StreamBeginCapture(_v\d+|_ptsz)?$")
END_CAPTURE = re.compile(r"^(cuda|hip)StreamEndCapture(_ptsz)?$")
LAUNCH = re.compile(r"^(cuda|hip|cu|hipExtModule|hipModule)?LaunchKernel(Ex(C)?)?(_v\d+|_ptsz)?$")


@dataclass(frozen=True)
class Captured:
    """One capture region: its launches in order, and for each the modelled op that made it."""

    launches: list[int]  # slice rows in the capture trace, by start
    kernels: list[str]  # the kernel each launch names ("" where the launch does not say)
    ops: list[int]  # the modelled op holding each launch (-1: none)


@dataclass(frozen=True)
class ReplayWork:
    """The by-shape rows the replays' kernels add, and how much of the replays they cover."""

    rows: list[ShapeRow]
    replays: int  # replays matched to a capture
    unmatched: int  # replays of graphs no capture region matches
    kernels_ns: int  # GPU time of the matched replays' kernels
    modelled_ns: int  # of it, the kernels of modelled ops
    unmatched_ns: int  # GPU time of the unmatched replays' work


def with_replays(r: Roofline, trace: Trace, capture: Trace | None) -> Roofline:
    """`r` with the rows of `trace`'s graph replays, from `capture` (None: `trace` itself, when
    it holds the capture), most GPU time first; the replays no capture matched are counted."""
    found = replay_work(trace, capture if capture is not None else trace)
    if not found.replays and not found.unmatched:
        return r
    total = int(trace.slices.dur[attribute(trace).work].sum())
    rows = list(r.rows)
    same = {_key(row): i for i, row in enumerate(rows)}
    for row in found.rows:  # a shape the file's own capture holds: one row, its calls added
        at = same.get(_key(row))
        if at is None:
            rows.append(row)
            continue
        own = rows[at]
        rows[at] = replace(
            own,
            calls=own.calls + row.calls,
            gpu_ns=own.gpu_ns + row.gpu_ns,
            min_ns=min(own.min_ns, row.min_ns),
            max_ns=max(own.max_ns, row.max_ns),
            starts=own.starts + row.starts,
        )
    order = sorted(range(len(rows)), key=lambda i: (-rows[i].gpu_ns, rows[i].name, rows[i].dims))
    place = np.empty(len(rows), np.int64)
    place[order] = np.arange(len(rows))
    return replace(
        r,
        rows=[rows[i] for i in order],
        shapes_recorded=r.shapes_recorded or bool(found.rows),
        call_group=place[r.call_group] if len(r.call_group) else r.call_group,
        replays_matched=found.replays,
        replays_unmatched_ns=found.unmatched_ns,
        replays_unmatched_share=found.unmatched_ns / total if total else 0.0,
    )


def captures(capture: Trace) -> list[Captured]:
    """The capture regions of `capture` (computed once per trace)."""
    return capture.derive("graph captures", lambda: _captures(capture))


def _captures(trace: Trace) -> list[Captured]:
    s = trace.slices
    begins = trace.rows_named(BEGIN_CAPTURE.match)
    ends = trace.rows_named(END_CAPTURE.match)
    launches = trace.rows_named(LAUNCH.match)
    launches = launches[np.argsort(s.start[launches], kind="stable")]
    modelled = np.zeros(len(s), bool)
    modelled[candidates(trace)] = True
    up = op_tree(trace).up
    out = []
    for begin in begins.tolist():
        lane = trace.lane_of(begin)
        after = ends[(s.start[ends] > s.start[begin]) & (ends >= lane.lo) & (ends < lane.hi)]
        if not len(after):
            continue
        end = int(s.start[after].min())
        inside = launches[(s.start[launches] > s.start[begin]) & (s.start[launches] < end)]
        inside = inside[(inside >= lane.lo) & (inside < lane.hi)].tolist()
        kernels = [_kernel_named(trace, row) for row in inside]
        out.append(Captured(inside, kernels, [_modelled_op(up, modelled, r) for r in inside]))
    return out


def _kernel_named(trace: Trace, launch: int) -> str:
    args = trace.args(launch)
    name = args.get("kernel") if isinstance(args, dict) else None
    return name if isinstance(name, str) else ""


def _modelled_op(up: np.ndarray, modelled: np.ndarray, row: int) -> int:
    """The outermost modelled op holding `row` (the one the roofline counts), or -1."""
    found, at = -1, int(up[row])
    while at >= 0:
        if modelled[at]:
            found = at
        at = int(up[at])
    return found


def replay_work(trace: Trace, capture: Trace) -> ReplayWork:
    """The rows `trace`'s graph replays add to its roofline, from the ops of `capture` (which may
    be `trace` itself). Computed once per pair."""
    key = f"replay work {id(capture)}"
    return trace.derive(key, lambda: _replay_work(trace, capture))


def _replay_work(trace: Trace, capture: Trace) -> ReplayWork:
    found = graphs(trace)
    regions = captures(capture)
    s = trace.slices
    works: dict[int, tuple[Work, tuple[str, str, str, str]] | None] = {}
    groups: dict[tuple[str, str, str, str], tuple[Work, list[int], list[int]]] = {}
    matched = unmatched = kernels_ns = modelled_ns = unmatched_ns = 0
    is_kernel = trace.category_test(lambda c: c.lower() == "kernel")
    for replay in found.replays:
        work = replay.work[is_kernel[s.cat[replay.work]]]  # the launches' nodes: no copies
        names = [trace.slice_name(int(w)) for w in work]
        region = _region_for(regions, names)
        if region is None:
            unmatched += 1
            unmatched_ns += int(s.dur[replay.work].sum())
            continue
        matched += 1
        kernels_ns += int(s.dur[work].sum())
        per_op: dict[int, int] = {}
        for piece, op in zip(work.tolist(), region.ops, strict=True):
            if op >= 0:
                per_op[op] = per_op.get(op, 0) + int(s.dur[piece])
        for op, gpu in per_op.items():
            if op not in works:
                works[op] = _work_of(capture, op)
            known = works[op]
            if known is None:
                continue
            modelled_ns += gpu
            row_work, key = known
            _, times, starts = groups.setdefault(key, (row_work, [], []))
            times.append(gpu)
            starts.append(int(s.start[replay.launch]))
    rows = [
        ShapeRow(key[0], key[1], w, len(t), sum(t), min(t), max(t), tuple(st), key[2], key[3])
        for key, (w, t, st) in groups.items()
    ]
    rows.sort(key=lambda r: (-r.gpu_ns, r.name, r.dims))
    return ReplayWork(rows, matched, unmatched, kernels_ns, modelled_ns, unmatched_ns)


def _key(row: ShapeRow) -> tuple[str, str, str, str, str]:
    return row.name, row.dims, row.concrete, row.types, row.work.math


def _region_for(regions: list[Captured], names: list[str]) -> Captured | None:
    """The capture whose launches are the replay's kernels: as many, and the same kernels where
    the launches name theirs."""
    for region in regions:
        if len(region.launches) != len(names):
            continue
        if all(not k or k == n for k, n in zip(region.kernels, names, strict=True)):
            return region
    return None


def _work_of(capture: Trace, op: int) -> tuple[Work, tuple[str, str, str, str]] | None:
    args = capture.args(op)
    name = capture.slice_name(op)
    work = work_of(name, args)
    if work is None or not isinstance(args, dict):
        return None
    if name.startswith(TRITON_PREFIX):  # its counts are args of its own, not shapes
        return work, (name, "[]", "[]", "[]")
    key = (
        name,
        json.dumps(args.get("Input Dims")),
        json.dumps(args.get("Concrete Inputs")),
        json.dumps(args.get("Input type")),
    )
    return work, key
