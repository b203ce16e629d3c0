"""Profiler steps: `ProfilerStep#N` windows on the CPU lanes, and the step that holds a time."""

from __future__ import annotations

import numpy as np

from ..patterns import PROFILER_STEP
from ..trace import Trace


def step_windows(trace: Trace) -> list[tuple[str, int, int]]:
    """(name, start, end) of every ProfilerStep#N on a CPU lane, by start (first of a name)."""
    s = trace.slices
    seen: dict[str, tuple[str, int, int]] = {}
    for lane in trace.lanes:
        if lane.kind != "cpu":
            continue
        ids = [i for i, n in enumerate(trace.names) if PROFILER_STEP.match(n)]
        rows = np.flatnonzero(np.isin(s.name[lane.lo : lane.hi], ids)) + lane.lo
        for r in rows.tolist():
            name = trace.names[int(s.name[r])]
            seen.setdefault(name, (name, int(s.start[r]), int(s.start[r] + s.dur[r])))
    return sorted(seen.values(), key=lambda w: w[1])


def profiled_window(trace: Trace) -> tuple[int, int]:
    """The profiler steps' span when the trace has them, else the whole trace."""
    steps = step_windows(trace)
    if steps:
        return min(w[1] for w in steps), max(w[2] for w in steps)
    return 0, max(trace.span_ns, 1)


def step_at(trace: Trace, t: int) -> tuple[str, int, int] | None:
    """The step (name, start, end) whose CPU span holds time `t`, or None."""
    return next((w for w in step_windows(trace) if w[1] <= t < w[2]), None)
