"""Profiler steps: `ProfilerStep#N` windows on the CPU lanes, and the step that holds a time."""

from __future__ import annotations

from ..patterns import PROFILER_STEP
from ..trace import Trace
from .attribution import gpu_work_rows


def step_windows(trace: Trace) -> list[tuple[str, int, int]]:
    """(name, start, end) of every ProfilerStep#N on a CPU lane, by start (first of a name)."""
    s = trace.slices
    seen: dict[str, tuple[str, int, int]] = {}
    for lane in trace.lanes:
        if lane.kind != "cpu":
            continue
        for r in trace.rows_named(PROFILER_STEP.match, lane.lo, lane.hi).tolist():
            name = trace.names[int(s.name[r])]
            seen.setdefault(name, (name, int(s.start[r]), int(s.start[r] + s.dur[r])))
    return sorted(seen.values(), key=lambda w: w[1])


def profiled_window(trace: Trace) -> tuple[int, int]:
    """The profiler steps' span, widened to hold all GPU work of the trace (work launched by the
    last step runs on after it); the whole trace when it has no steps."""
    steps = step_windows(trace)
    if not steps:
        return 0, max(trace.span_ns, 1)
    t0, t1 = min(w[1] for w in steps), max(w[2] for w in steps)
    work = gpu_work_rows(trace)
    if len(work):
        t0 = min(t0, int(trace.slices.start[work].min()))
        t1 = max(t1, int(trace.slices.end[work].max()))
    return t0, t1


def step_at(trace: Trace, t: int) -> tuple[str, int, int] | None:
    """The step (name, start, end) whose CPU span holds time `t`, or None."""
    return next((w for w in step_windows(trace) if w[1] <= t < w[2]), None)
