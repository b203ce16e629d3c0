"""Idle gaps on GPU devices and streams, and their causes, by HTA's rule.

A device gap is a stretch between the first and last GPU work (kernel, memcpy, memset, MTIA
device event) where no work runs on any stream of any device of the trace (a trace is one rank:
its devices are measured together, as GPU busy is): that is the headline idle time. A stream's
idle gap is the same for one stream alone: a breakdown under it (a copy stream idle for half a
second while the compute stream is busy is not the GPU waiting). A gap's cause, following
HolisticTraceAnalysis's idle-time breakdown:

- host wait: the CPU called the launch of the next work only after the previous work ended, so
  the GPU waited for the host;
- kernel wait: otherwise, a gap shorter than `KERNEL_WAIT_NS`, the bare cost of starting the
  next kernel (HTA's `consecutive_kernel_delay`, 30, is compared against microseconds in the
  versions in use: 30 us);
- other: the launch was already queued (or is not in the trace): synchronisation between streams,
  launch latency.
"""

from __future__ import annotations

import msgspec
import numpy as np
import numpy.typing as npt

from tui.model.arrays import I32, I64, Bool

from ..patterns import is_gpu_work_category
from ..trace import Trace
from .attribution import launch_of

KERNEL_WAIT_NS = 30_000
CAUSES = ("host wait", "kernel wait", "other")
HOST_WAIT, KERNEL_WAIT, OTHER = range(3)


class Gaps(msgspec.Struct, frozen=True):
    """Idle gaps: every stream's by lane, then start, then every device's (`device_from` on).

    A device gap's `lane` is the lane of the work that ends it.
    """

    lane: I32
    start: I64
    end: I64
    cause: npt.NDArray[np.int8]
    next_work: I64  # the slice that ends the gap
    device_from: int  # gaps [device_from, len) are whole-device gaps

    def __len__(self) -> int:
        return len(self.start)

    @property
    def length(self) -> I64:
        return self.end - self.start

    @property
    def whole_device(self) -> Bool:
        return np.arange(len(self.start)) >= self.device_from

    def idle_ns(self, t0: int, t1: int, whole_device: bool) -> dict[str, int]:
        """Idle time inside [t0, t1) by cause: of the devices, or summed over the streams."""
        pick = self.whole_device == whole_device
        starts, ends = np.clip(self.start, t0, t1), np.clip(self.end, t0, t1)
        return {
            cause: int((ends - starts)[pick & (self.cause == k)].clip(0).sum())
            for k, cause in enumerate(CAUSES)
        }


def idle_gaps(trace: Trace) -> Gaps:
    """Every idle gap of every GPU stream and device of the trace (computed once per trace)."""
    return trace.derive("gaps", lambda: _idle_gaps(trace))


def _idle_gaps(trace: Trace) -> Gaps:
    s = trace.slices
    work_cat = trace.category_test(is_gpu_work_category)
    launch = launch_of(trace)
    streams: list[tuple[I64, ...]] = []
    every: list[I64] = []
    for lane in trace.lanes:
        if lane.kind != "gpu":
            continue
        rows = np.flatnonzero(work_cat[s.cat[lane.lo : lane.hi]]) + lane.lo
        every.append(rows)
        streams.append(_gaps_between(trace, rows, launch, lane.index))
    rows = np.concatenate(every) if every else np.zeros(0, np.int64)
    parts = [*streams, _gaps_between(trace, rows[np.lexsort((rows, s.start[rows]))], launch, -1)]
    if not every:
        empty = np.zeros(0, np.int64)
        return Gaps(empty.astype(np.int32), empty, empty, empty.astype(np.int8), empty, 0)
    lane_ids, start, end, cause, nxt = (np.concatenate(p) for p in zip(*parts, strict=True))
    device_from = sum(len(p[0]) for p in streams)
    return Gaps(lane_ids.astype(np.int32), start, end, cause.astype(np.int8), nxt, device_from)


def _gaps_between(trace: Trace, rows: I64, launch: I64, lane: int) -> tuple[I64, ...]:
    """(lane, start, end, cause, next work) of the gaps between work `rows` (by start); lane -1
    means the lane of the next work."""
    s = trace.slices
    if len(rows) < 2:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty, empty
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
    cause[~host & (gap_end - gap_start < KERNEL_WAIT_NS)] = KERNEL_WAIT
    if lane >= 0:
        lanes = np.full(len(idle), lane, np.int64)
    else:
        los = np.asarray([lane.lo for lane in trace.lanes], np.int64)
        lanes = np.searchsorted(los, nxt, side="right") - 1
    return lanes, gap_start, gap_end, cause, nxt


def largest_first(gaps: Gaps) -> I64:
    """Gap indices for `g`: the devices' gaps from the longest to the shortest, then the
    streams' (earliest first among equals)."""
    return np.lexsort((gaps.start, -gaps.length, ~gaps.whole_device)).astype(np.int64)
