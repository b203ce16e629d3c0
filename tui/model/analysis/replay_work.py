"""What graph-replayed kernels computed: the FLOPs and bytes of the ops that launched them while
the graph was captured.

Serving engines and compiled runs replay CUDA/HIP graphs: a replay is one launch call and
hundreds of kernels, with no op around each kernel, so the roofline knows none of them. The
capture (the same file, or a trace of the capture phase the user names) holds the ops, their
shapes, and the launches they made between `cudaStreamBeginCapture` and `cudaStreamEndCapture`:
the graph's nodes, in order. The k-th kernel of a replay is the k-th launch of the capture whose
kernel count (and, where the capture's launches name their kernels, as HIP's do, whose kernel
names) match the graph's; its op's FLOPs and bytes become one call of that op per replay, timed
by the kernels the op's launches became, and an fp32 GEMM whose replayed kernels ran on tensor
cores is TF32 (op_kernels.with_math's rule, read off the replay). Where several captures fit a
graph (one per batch size, as many launches each, and no kernel names to tell them apart), the
replay is left unmatched rather than guessed.
"""

from __future__ import annotations

import json
import re

import msgspec
import numpy as np
from msgspec.structs import replace

from ..patterns import TF32_KERNEL
from ..trace import Trace
from .attribution import attribute, op_tree
from .graphs import graphs
from .iterations import Iteration
from .perf_model import work_of
from .roofline import Roofline, ShapeRow, candidates, iteration_at
from .work import CONV, DTYPE_CLASS, GEMM, Work

BEGIN_CAPTURE = re.compile(r"^(cuda|hip)StreamBeginCapture(_v\d+|_ptsz)?$")
END_CAPTURE = re.compile(r"^(cuda|hip)StreamEndCapture(_ptsz)?$")
LAUNCH = re.compile(r"^(cuda|hip|cu|hipExtModule|hipModule)?LaunchKernel(Ex(C)?)?(_v\d+|_ptsz)?$")


class Captured(msgspec.Struct, frozen=True):
    """One capture region: its launches in order, and for each the modelled op that made it."""

    launches: list[int]  # slice rows in the capture trace, by start
    kernels: list[str]  # the kernel each launch names ("" where the launch does not say)
    ops: list[int]  # the modelled op holding each launch (-1: none)


class ReplayWork(msgspec.Struct, frozen=True):
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
            starts=tuple(sorted(own.starts + row.starts)),
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


CAPTURES_KEY = "graph captures"  # its slot in `trace.derived` (a model cache may fill it)


def captures(capture: Trace) -> list[Captured]:
    """The capture regions of `capture` (computed once per trace: the kernels the launches
    name are in their args, decoded from the file)."""
    return capture.derive(CAPTURES_KEY, lambda: _captures(capture))


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
        mine = (ends >= lane.lo) & (ends < lane.hi)
        after = ends[mine & (s.start[ends] > s.start[begin])]
        later = begins[
            (begins >= lane.lo) & (begins < lane.hi) & (s.start[begins] > s.start[begin])
        ]
        if not len(after):
            continue
        end = int(s.start[after].min())
        if len(later) and int(s.start[later].min()) < end:
            continue  # a capture that never ended: the next one's end is not its own
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
    key = f"replay work {capture.path} {capture.span_ns} {len(capture.slices)}"
    return trace.derive(key, lambda: _replay_work(trace, capture))


def _replay_work(trace: Trace, capture: Trace) -> ReplayWork:
    found = graphs(trace)
    regions = captures(capture)
    s = trace.slices
    works: dict[int, tuple[Work, tuple[str, str, str, str]] | None] = {}
    groups: dict[tuple[str, str, str, str, str], tuple[Work, list[int], list[int]]] = {}
    matched = unmatched = kernels_ns = modelled_ns = unmatched_ns = 0
    is_kernel = trace.category_test(lambda c: c.lower() == "kernel")
    tf32 = trace.name_test(TF32_KERNEL.search)
    seen: dict[tuple[int, ...], Captured | None] = {}  # a graph's kernels -> its capture
    for replay in found.replays:
        work = replay.work[is_kernel[s.cat[replay.work]]]  # the launches' nodes: no copies
        names = tuple(s.name[work].tolist())
        if names not in seen:
            seen[names] = _region_for(regions, [trace.names[n] for n in names])
        region = seen[names]
        if region is None:
            unmatched += 1
            unmatched_ns += int(s.dur[replay.work].sum())
            continue
        matched += 1
        kernels_ns += int(s.dur[work].sum())
        ops = np.asarray(region.ops, np.int64)
        placed = ops >= 0
        distinct, index = np.unique(ops[placed], return_inverse=True)
        gpu = np.bincount(index, weights=s.dur[work][placed], minlength=len(distinct))
        on_tensor_cores = np.bincount(
            index, weights=tf32[s.name[work][placed]], minlength=len(distinct)
        )
        for op, ns, cores in zip(
            distinct.tolist(), gpu.tolist(), on_tensor_cores.tolist(), strict=True
        ):
            # Paged attention's KV lengths: the replay's iteration's, not the capture's.
            at = iteration_at(trace, capture.slice_name(op), int(s.start[replay.launch]))
            if at is not None:
                known = _work_of(capture, op, at)
            else:
                if op not in works:
                    works[op] = _work_of(capture, op, None)
                known = works[op]
            if known is None:
                continue
            modelled_ns += int(ns)
            row_work, key = known
            if (
                cores
                and DTYPE_CLASS.get(row_work.dtype) == "fp32"
                and row_work.kind in (GEMM, CONV)
            ):
                row_work = replace(row_work, math="tf32")  # its replayed kernels say so
            tag = row_work.variant
            _, times, starts = groups.setdefault((*key, tag), (row_work, [], []))
            times.append(int(ns))
            starts.append(int(s.start[replay.launch]))
    rows = [
        ShapeRow(
            key[0], key[1], w, len(t), sum(t), min(t), max(t), tuple(sorted(st)), key[2], key[3]
        )
        for key, (w, t, st) in groups.items()
    ]
    rows.sort(key=lambda r: (-r.gpu_ns, r.name, r.dims))
    return ReplayWork(rows, matched, unmatched, kernels_ns, modelled_ns, unmatched_ns)


def _key(row: ShapeRow) -> tuple[str, str, str, str, str]:
    """A by-shape row's identity, as roofline.py groups calls."""
    return row.name, row.dims, row.concrete, row.types, row.work.variant


def _region_for(regions: list[Captured], names: list[str]) -> Captured | None:
    """The capture whose launches are the replay's kernels: as many, and the same kernels where
    the launches name theirs; None where none is, or several are (a serving engine captures a
    graph per batch size, as many launches each: without kernel names there is no telling)."""
    fits = [
        region
        for region in regions
        if len(region.launches) == len(names)
        and all(not k or k == n for k, n in zip(region.kernels, names, strict=True))
    ]
    return fits[0] if len(fits) == 1 else None


def _work_of(
    capture: Trace, op: int, iteration: Iteration | None
) -> tuple[Work, tuple[str, str, str, str]] | None:
    args = capture.args(op)
    name = capture.slice_name(op)
    work = work_of(name, args, iteration)
    if work is None or not isinstance(args, dict):
        return None
    key = (
        name,
        json.dumps(args.get("Input Dims")),
        json.dumps(args.get("Concrete Inputs")),
        json.dumps(args.get("Input type")),
    )
    return work, key
