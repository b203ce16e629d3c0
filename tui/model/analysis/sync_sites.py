"""Where the CPU waits for the GPU: each sync call's site, the innermost Python frame outside
torch above it (a trace recorded with `with_stack=True`), else the op that made it
(`aten::item`, `aten::copy_`), with how often it waited and the GPU idle time it covers."""

from __future__ import annotations

import re

import msgspec
import numpy as np

from ..patterns import PROFILER_STEP, is_python_frame
from ..trace import Trace
from .syncs import waiting_syncs
from .verdict import idle_covered

# Frames that are not the user's line: torch's own files, built-in calls, module wrappers, the
# standard library's context managers and decorators.
_NOT_THE_CALLER = re.compile(
    r"^(<built-in|nn\.Module:|torch/|(contextlib|functools|threading|abc)\.py\()"
)
# The sync torch.profiler makes when it stops (the trace's last wait): not the user's.
_PROFILER_FRAME = re.compile(r"^torch/(profiler|autograd/profiler)")


class SyncSite(msgspec.Struct, frozen=True):
    site: str  # `model.py(42): forward`, or the op's name without stacks
    calls: int
    wait_ns: int  # CPU time in the sync calls
    idle_ns: int  # GPU idle time they cover
    longest: int  # slice row of the call covering the most idle time


def sync_sites(trace: Trace, t0: int, t1: int) -> list[SyncSite]:
    """The sites of the sync calls that waited for GPU work in [t0, t1), most idle time
    covered first (then most wait)."""
    s = trace.slices
    rows = waiting_syncs(trace)
    rows = rows[(s.start[rows] >= t0) & (s.start[rows] < t1)]
    if not len(rows):
        return []
    python = trace.category_test(is_python_frame)
    covered = idle_covered(trace, rows, t0, t1)
    sites: dict[str, list[tuple[int, int]]] = {}
    for row, idle in zip(rows.tolist(), covered.tolist(), strict=True):
        site = _site(trace, row, python)
        if site is not None:
            sites.setdefault(site, []).append((row, idle))
    found = [
        SyncSite(
            site,
            len(calls),
            int(s.dur[[r for r, _ in calls]].sum()),
            sum(i for _, i in calls),
            max(calls, key=lambda c: c[1])[0],
        )
        for site, calls in sites.items()
    ]
    return sorted(found, key=lambda f: (-f.idle_ns, -f.wait_ns, f.site))


def _site(trace: Trace, row: int, python: np.ndarray) -> str | None:
    """The innermost Python frame outside torch above `row`, else its innermost op (not the
    step), else the call itself (None: the profiler's own sync as it stops)."""
    s = trace.slices
    op = None
    at = int(s.parent[row])
    while at >= 0:
        name = trace.slice_name(at)
        if python[s.cat[at]]:
            if _PROFILER_FRAME.match(name):
                return None
            if not _NOT_THE_CALLER.match(name):
                return name
        elif op is None and not PROFILER_STEP.match(name):
            op = name
        at = int(s.parent[at])
    return op or trace.slice_name(row)
