"""Clocks that disagree: when the GPU's timestamps run far behind the CPU's, every piece of GPU
work seems to start long after its launch, even on an idle GPU, and a window drawn on the CPU's
clock holds the wrong GPU work.

The sign is the smallest launch-to-start lag over launches onto an idle GPU (nothing of the
trace running or still queued when the call was made): no queue explains it, and a real launch
onto an idle GPU starts within microseconds (a graph launch within a millisecond or so).
"""

from __future__ import annotations

import msgspec
import numpy as np

from ..trace import Trace
from .attribution import attribute
from .gpu_time import busy

OFFSET_NS = 5_000_000  # a smallest idle-GPU lag above this is the clocks, not the launch
IDLE_LAUNCHES = 3  # at least this many launches onto an idle GPU to judge by
EXAMPLES = 20  # GPU work kept to jump to


class ClockOffset(msgspec.Struct, frozen=True):
    """GPU work that starts at least `lag_ns` after its launch even on an idle GPU."""

    lag_ns: int  # the smallest launch-to-start lag over launches onto an idle GPU
    launches: int  # how many such launches
    examples: list[int]  # their GPU work's slice rows, the first few by start


def clock_offset(trace: Trace) -> ClockOffset | None:
    """The CPU and GPU clocks' disagreement, when the smallest lag over launches onto an idle
    GPU is above OFFSET_NS; None otherwise (computed once)."""
    return trace.derive("clock offset", lambda: _clock_offset(trace))


def _clock_offset(trace: Trace) -> ClockOffset | None:
    s, att = trace.slices, attribute(trace)
    launched = np.flatnonzero(att.launch >= 0)
    if len(launched) < IDLE_LAUNCHES:
        return None
    launch = att.launch[launched]
    order = np.argsort(s.start[launch], kind="stable")
    launch, work = launch[order], att.work[launched][order]
    at = s.start[launch]
    # What was running or queued at each launch: any piece launched before it that had not
    # ended, and any piece running then (work without a launch in the trace included).
    reach = np.maximum.accumulate(s.end[work])
    pending = np.concatenate(([np.iinfo(np.int64).min], reach[:-1])) > at
    idle = ~pending & (busy(trace).running(at) <= 0)
    if int(idle.sum()) < IDLE_LAUNCHES:
        return None
    lag = int((s.start[work][idle] - at[idle]).min())
    if lag <= OFFSET_NS:
        return None
    return ClockOffset(lag, int(idle.sum()), [int(r) for r in work[idle][:EXAMPLES].tolist()])
