"""CPU calls that wait for the GPU, and where they overlap the GPU's idle time."""

from __future__ import annotations

import numpy as np

from tui.model.arrays import I64

from ..patterns import SYNC_NAME, is_runtime_category
from ..trace import Trace
from .gpu_time import busy


def sync_rows(trace: Trace) -> I64:
    """Slices on CPU lanes that are synchronising runtime calls, by start (computed once)."""
    return trace.derive("sync_rows", lambda: _sync_rows(trace))


def _sync_rows(trace: Trace) -> I64:
    s = trace.slices
    sync_name = trace.name_test(SYNC_NAME.match)
    runtime = trace.category_test(is_runtime_category)
    rows = np.flatnonzero(trace.kind_mask("cpu") & sync_name[s.name] & runtime[s.cat])
    return rows[np.argsort(s.start[rows], kind="stable")].astype(np.int64)


def waiting_syncs(trace: Trace) -> I64:
    """The sync calls that waited for GPU work: all but the blocking copies during which the
    GPU ran (almost) nothing (the call is the copy, and what it waits for is the host, the link
    or a queue stalled outside the trace, not GPU work). By start (computed once)."""
    return trace.derive("waiting_syncs", lambda: _waiting(trace))


def blocking_copies(trace: Trace) -> I64:
    """The sync calls that are blocking copies with nothing running on the GPU meanwhile."""

    def find() -> I64:
        rows = sync_rows(trace)
        return rows[~np.isin(rows, waiting_syncs(trace))]

    return trace.derive("blocking_copies", find)


# A blocking copy during which the GPU was busy less than this share of the time waited for no
# GPU work (its own copy and a few queued kernels run at its very end).
COPY_BUSY = 0.1


def _waiting(trace: Trace) -> I64:
    s = trace.slices
    rows = sync_rows(trace)
    copies = rows[trace.name_test(lambda n: "Memcpy" in n)[s.name[rows]]]
    if not len(copies):
        return rows
    gpu = busy(trace)
    held = gpu.before(s.end[copies]) - gpu.before(s.start[copies])
    idle = copies[held < COPY_BUSY * s.dur[copies]]
    return rows[~np.isin(rows, idle)]


def syncs_in(trace: Trace, t0: int, t1: int) -> tuple[int, int]:
    """(number of sync calls starting in [t0, t1), CPU time spent in them)."""
    rows = sync_rows(trace)
    starts = trace.slices.start[rows]
    pick = rows[(starts >= t0) & (starts < t1)]
    return len(pick), int(trace.slices.dur[pick].sum())


def overlapping(trace: Trace, t0: int, t1: int) -> list[tuple[int, int]]:
    """(sync call, ns of [t0, t1) it covers), largest first."""
    rows = sync_rows(trace)
    s = trace.slices
    start, end = s.start[rows], s.start[rows] + s.dur[rows]
    cover = np.minimum(end, t1) - np.maximum(start, t0)
    hit = cover > 0
    order = np.argsort(-cover[hit], kind="stable")
    return [(int(r), int(c)) for r, c in zip(rows[hit][order], cover[hit][order], strict=True)]
