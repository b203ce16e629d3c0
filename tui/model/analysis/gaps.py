"""Idle gaps on GPU streams and their causes, by HTA's rule.

A gap is a stretch between a stream's first and last GPU work (kernel, memcpy, memset) where none
runs. Its cause, as HolisticTraceAnalysis's idle-time breakdown defines it:

- kernel wait: the gap is shorter than `KERNEL_WAIT_NS` (HTA's `consecutive_kernel_delay`), the
  bare cost of starting the next kernel;
- host wait: the CPU called the launch of the next work only after the previous work ended, so
  the GPU waited for the host;
- other: the launch was already queued (or is not in the trace): synchronisation between streams,
  launch latency.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..patterns import GPU_WORK_CATEGORIES
from ..trace import Trace
from .attribution import launch_of

KERNEL_WAIT_NS = 30
CAUSES = ("host wait", "kernel wait", "other")
HOST_WAIT, KERNEL_WAIT, OTHER = range(3)


@dataclass(frozen=True)
class Gaps:
    """Idle gaps of every GPU stream, by lane, then start."""

    lane: npt.NDArray[np.int32]
    start: npt.NDArray[np.int64]
    end: npt.NDArray[np.int64]
    cause: npt.NDArray[np.int8]
    next_work: npt.NDArray[np.int64]  # the slice that ends the gap

    def __len__(self) -> int:
        return len(self.start)

    @property
    def length(self) -> npt.NDArray[np.int64]:
        return self.end - self.start


def idle_gaps(trace: Trace) -> Gaps:
    """Every idle gap on every GPU stream of the trace (computed once per trace)."""
    return trace.derive("gaps", lambda: _idle_gaps(trace))


def _idle_gaps(trace: Trace) -> Gaps:
    s = trace.slices
    work_cat = np.asarray([c.lower() in GPU_WORK_CATEGORIES for c in trace.categories] + [False])
    launch = launch_of(trace)
    parts: list[tuple[npt.NDArray[np.int64], ...]] = []
    for lane in trace.lanes:
        if lane.kind != "gpu":
            continue
        rows = np.flatnonzero(work_cat[s.cat[lane.lo : lane.hi]]) + lane.lo
        if len(rows) < 2:
            continue
        ends = np.maximum.accumulate(s.end[rows])
        starts = s.start[rows]
        idle = np.flatnonzero(starts[1:] > ends[:-1])
        gap_start, gap_end, nxt = ends[idle], starts[idle + 1], rows[idle + 1]
        cause = np.full(len(idle), OTHER, np.int64)
        launched = launch[nxt]
        known = launched >= 0
        host = np.zeros(len(idle), bool)
        host[known] = s.start[launched[known]] > gap_start[known]
        cause[host] = HOST_WAIT
        cause[gap_end - gap_start < KERNEL_WAIT_NS] = KERNEL_WAIT
        parts.append((np.full(len(idle), lane.index, np.int64), gap_start, gap_end, cause, nxt))
    if not parts:
        empty = np.zeros(0, np.int64)
        return Gaps(empty.astype(np.int32), empty, empty, empty.astype(np.int8), empty)
    lane_ids, start, end, cause, nxt = (np.concatenate(p) for p in zip(*parts, strict=True))
    return Gaps(lane_ids.astype(np.int32), start, end, cause.astype(np.int8), nxt)


def largest_first(gaps: Gaps) -> npt.NDArray[np.int64]:
    """Gap indices from the longest to the shortest (earliest first among equals)."""
    return np.lexsort((gaps.start, -gaps.length)).astype(np.int64)
