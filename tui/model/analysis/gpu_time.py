"""Where the GPU's time goes in a window: computation, communication, copies, and their overlap.

TraceLens's `gpu_timeline` definitions: computation is the union of compute kernels (all GPU
work but collectives and copies; a memset is a kernel), communication the union of collective
kernels (NCCL, RCCL, HCCL, gloo by name), memcpy the union of copies. Exposed communication is
communication while no computation runs; exposed memcpy is copying while neither runs; busy is
the union of everything, and idle the rest of the window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..patterns import COMM_NAME
from ..trace import Trace
from .attribution import attribute

I64 = npt.NDArray[np.int64]
COMPUTE, COMM, MEMCPY = 0, 1, 2
# Copies only: a memset runs as a kernel and counts as computation, as TraceLens counts it.
_COPY_CATEGORIES = frozenset({"gpu_memcpy", "memcpy"})


@dataclass(frozen=True)
class GpuTime:
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
    work = attribute(trace).work
    s = trace.slices
    comm = np.asarray([bool(COMM_NAME.search(n)) for n in trace.names] + [False])
    copy = np.asarray([c.lower() in _COPY_CATEGORIES for c in trace.categories] + [False])
    out = np.full(len(work), COMPUTE, np.int8)
    out[comm[s.name[work]]] = COMM
    out[copy[s.cat[work]]] = MEMCPY
    return out


def gpu_time(trace: Trace, t0: int, t1: int, pieces: I64 | None = None) -> GpuTime:
    """The breakdown of [t0, t1), over all GPU work or over `pieces` (indices into
    attribute(trace).work), each clipped to the window."""
    s = trace.slices
    work = attribute(trace).work
    kind = work_class(trace)
    if pieces is not None:
        work, kind = work[pieces], kind[pieces]
    start = np.clip(s.start[work], t0, t1)
    end = np.clip(s.end[work], t0, t1)

    def union(*classes: int) -> int:
        pick = np.isin(kind, classes)
        return interval_union(start[pick], end[pick])

    comp, comm, copy = union(COMPUTE), union(COMM), union(MEMCPY)
    comp_comm = union(COMPUTE, COMM)
    busy = union(COMPUTE, COMM, MEMCPY)
    return GpuTime(max(t1 - t0, 0), comp, comm, copy, busy, comp_comm - comp, busy - comp_comm)


def interval_union(starts: I64, ends: I64) -> int:
    """Total length covered by the intervals [starts, ends)."""
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    new = np.concatenate(([True], starts[1:] > reach[:-1]))
    firsts = np.flatnonzero(new)
    return int((np.maximum.reduceat(ends, firsts) - starts[firsts]).sum())
