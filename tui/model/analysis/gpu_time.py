"""Where the GPU's time goes in a window: computation, communication, copies, and their overlap.

TraceLens's `gpu_timeline` definitions: computation is the union of compute kernels (all GPU
work but collectives and copies; a memset is a kernel), communication the union of collective
kernels, memcpy the union of copies. TraceLens knows collectives by NCCL/RCCL names; we also
know the families serving engines and symm_mem write (patterns.COMM_KERNEL_FAMILIES) and any
kernel whose op is a collective (patterns.COMM_OP_NAME), such as a symm_mem all-reduce's.
Exposed communication is communication while no computation runs; exposed memcpy is copying
while neither runs; busy is the union of everything, and idle the rest of the window.
"""

from __future__ import annotations

import msgspec
import numpy as np
import numpy.typing as npt

from tui.model.arrays import I64, Bool

from ..patterns import COMM_KERNEL_NAME, COMM_OP_NAME
from ..trace import Trace
from .attribution import attribute

COMPUTE, COMM, MEMCPY = 0, 1, 2
# Copies only: a memset runs as a kernel and counts as computation, as TraceLens counts it.
_COPY_CATEGORIES = frozenset({"gpu_memcpy", "memcpy"})


class GpuTime(msgspec.Struct, frozen=True):
    """One window's GPU time (ns)."""

    window_ns: int
    computation_ns: int
    communication_ns: int
    memcpy_ns: int
    busy_ns: int
    exposed_comm_ns: int
    exposed_memcpy_ns: int

    @property
    def overlap_ns(self) -> int:
        """Communication that ran while computation did."""
        return self.communication_ns - self.exposed_comm_ns

    @property
    def idle_ns(self) -> int:
        return max(self.window_ns - self.busy_ns, 0)


def work_class(trace: Trace) -> npt.NDArray[np.int8]:
    """COMPUTE, COMM or MEMCPY for each piece of GPU work (attribute(trace).work order)."""
    return trace.derive("work_class", lambda: _work_class(trace))


def _work_class(trace: Trace) -> npt.NDArray[np.int8]:
    att = attribute(trace)
    work, op = att.work, att.op
    s = trace.slices
    owned = np.flatnonzero(op >= 0)
    comm = trace.name_test(COMM_KERNEL_NAME.search, s.name[work])
    comm_op = trace.name_test(COMM_OP_NAME.search, s.name[op[owned]])
    copy = trace.category_test(lambda c: c.lower() in _COPY_CATEGORIES)
    out = np.full(len(work), COMPUTE, np.int8)
    out[comm[s.name[work]]] = COMM
    out[owned[comm_op[s.name[op[owned]]]]] = COMM
    out[copy[s.cat[work]]] = MEMCPY
    return out


class Busy(msgspec.Struct, frozen=True):
    """When the GPU (any of its streams) is busy, computed once per trace: every piece of work's
    start and end, each sorted, and their union as sorted disjoint intervals."""

    starts: I64
    ends: I64
    union_start: I64
    union_end: I64
    union_before: I64  # union_before[k]: the length of the first k intervals of the union

    def running(self, t: I64) -> I64:
        """How many pieces run at each time in `t` (started at or before it, not ended)."""
        started = np.searchsorted(self.starts, t, side="right")
        return np.asarray(started - np.searchsorted(self.ends, t, side="right"), np.int64)

    def overlapping(self, t0: int, t1: int) -> int:
        """How many pieces overlap [t0, t1)."""
        started = np.searchsorted(self.starts, t1, side="left")
        return int(started - np.searchsorted(self.ends, t0, side="right"))

    def before(self, t: I64) -> I64:
        """The GPU's busy time before each time in `t`."""
        if not len(self.union_start):
            return np.zeros(len(t), np.int64)
        k = np.searchsorted(self.union_start, t, side="right")  # intervals begun by t
        last = np.maximum(k - 1, 0)
        start, length = self.union_start[last], self.union_end[last] - self.union_start[last]
        inside = np.clip(t - start, 0, length)
        return np.asarray(np.where(k > 0, self.union_before[last] + inside, 0), np.int64)


def busy(trace: Trace) -> Busy:
    return trace.derive("gpu busy", lambda: _busy(trace))


def _busy(trace: Trace) -> Busy:
    s, work = trace.slices, attribute(trace).work
    order = np.argsort(s.start[work], kind="stable")
    start, end = s.start[work][order], s.end[work][order]
    if len(start):
        reach = np.maximum.accumulate(end)
        firsts = np.flatnonzero(np.concatenate(([True], start[1:] > reach[:-1])))
        u_start, u_end = start[firsts], np.maximum.reduceat(end, firsts)
    else:
        u_start = u_end = np.zeros(0, np.int64)
    before = np.concatenate(([0], np.cumsum(u_end - u_start))).astype(np.int64)
    return Busy(start, np.sort(end), u_start, u_end, before)


class _ByStart(msgspec.Struct, frozen=True):
    """GPU work by start, with the longest piece, to find what overlaps a window quickly."""

    start: I64
    end: I64
    kind: npt.NDArray[np.int8]
    longest: int


def _by_start(trace: Trace) -> _ByStart:
    def build() -> _ByStart:
        s = trace.slices
        work = attribute(trace).work
        order = np.argsort(s.start[work], kind="stable")
        work = work[order]
        dur = s.dur[work]
        return _ByStart(
            s.start[work], s.end[work], work_class(trace)[order], int(dur.max()) if len(dur) else 0
        )

    return trace.derive("gpu_work_by_start", build)


def gpu_time(trace: Trace, t0: int, t1: int) -> GpuTime:
    """The breakdown of the window [t0, t1): all GPU work in it, each piece clipped to it."""
    w = _by_start(trace)
    a, b = np.searchsorted(w.start, [t0 - w.longest, t1], side="left")
    return _breakdown(w.start[a:b], w.end[a:b], w.kind[a:b], t0, t1)


def gpu_time_of(trace: Trace, pieces: I64, t0: int, t1: int) -> GpuTime:
    """The breakdown of [t0, t1) counting only `pieces` of GPU work (indices into
    attribute(trace).work), each clipped to it: a step's own work, say."""
    s = trace.slices
    work = attribute(trace).work[pieces]
    return _breakdown(s.start[work], s.end[work], work_class(trace)[pieces], t0, t1)


def _breakdown(start: I64, end: I64, kind: npt.NDArray[np.int8], t0: int, t1: int) -> GpuTime:
    order = np.argsort(start, kind="stable")  # once: every subset below stays sorted
    start, end, kind = np.clip(start[order], t0, t1), np.clip(end[order], t0, t1), kind[order]

    def union(pick: Bool) -> int:
        return interval_union(start[pick], end[pick], presorted=True)

    comp, comm, copy = union(kind == COMPUTE), union(kind == COMM), union(kind == MEMCPY)
    comp_comm = union(kind != MEMCPY)
    busy = union(np.ones(len(kind), bool))
    return GpuTime(max(t1 - t0, 0), comp, comm, copy, busy, comp_comm - comp, busy - comp_comm)


def interval_union(starts: I64, ends: I64, presorted: bool = False) -> int:
    """Total length covered by the intervals [starts, ends) (`presorted`: by start already)."""
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    if len(starts) == 0:
        return 0
    if not presorted:
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    new = np.concatenate(([True], starts[1:] > reach[:-1]))
    firsts = np.flatnonzero(new)
    return int((np.maximum.reduceat(ends, firsts) - starts[firsts]).sum())
