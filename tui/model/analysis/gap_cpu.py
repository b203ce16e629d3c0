"""What the CPU was doing while the GPU sat idle in one gap: on each thread, the innermost call
that covers most of the gap (`enumerate(DataLoader)...__next__`, a `threading.py: wait`, an
op), and the DataLoader's share of the gap wherever its frames ran."""

from __future__ import annotations

import msgspec
import numpy as np

from ..intervals import merge
from ..patterns import DATALOADER_NAME, PROFILER_STEP
from ..trace import Trace
from .attribution import op_tree

MOST = 0.5  # a call covers "most" of a gap from this share on
THREADS_SHOWN = 3


class GapCpu(msgspec.Struct, frozen=True):
    calls: list[tuple[int, int]]  # (slice row, ns of the gap it covers)
    dataloader_ns: int  # of the gap, under any DataLoader frame (merged across threads)


def gap_cpu(trace: Trace, t0: int, t1: int, first_lane: int = -1) -> GapCpu:
    """The calls (ops, annotations, Python frames; not steps) that each cover at least MOST of
    [t0, t1), the innermost one per thread (the thread `first_lane` first: the one that launched
    the work ending the gap, whose call is why it ended then; then by how much they cover); and
    how much of it the DataLoader covers."""
    s = trace.slices
    ops = np.flatnonzero(op_tree(trace).is_op & trace.kind_mask("cpu"))
    ops = ops[(s.start[ops] < t1) & (s.end[ops] > t0)]
    cover = np.minimum(s.end[ops], t1) - np.maximum(s.start[ops], t0)
    step = trace.name_test(PROFILER_STEP.match)[s.name[ops]]
    most = ops[(cover >= MOST * (t1 - t0)) & ~step]
    found: list[tuple[bool, int, int]] = []
    lanes = trace.lane_indices(most)
    for lane in np.unique(lanes):
        mine = most[lanes == lane]
        inner = int(mine[np.argmax(s.depth[mine])])  # covering calls nest: the deepest
        covered = int(min(s.end[inner], t1) - max(s.start[inner], t0))
        found.append((int(lane) != first_lane, -covered, inner))
    calls = [(row, -minus) for _, minus, row in sorted(found)]
    loader = ops[trace.name_test(DATALOADER_NAME.search)[s.name[ops]]]
    return GapCpu(calls[:THREADS_SHOWN], _union(s.start[loader], s.end[loader], t0, t1))


def _union(start: np.ndarray, end: np.ndarray, t0: int, t1: int) -> int:
    """Of [t0, t1), the time inside any of the intervals."""
    order = np.argsort(start, kind="stable")
    u_start, u_end = merge(np.clip(start[order], t0, t1), np.clip(end[order], t0, t1))
    return int((u_end - u_start).sum())
