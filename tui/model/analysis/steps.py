"""Profiler steps: `ProfilerStep#N` windows on the CPU lanes, and the step that holds a time."""

from __future__ import annotations

from ..patterns import PROFILER_STEP
from ..trace import Trace
from .attribution import gpu_work_rows
from .clock import clock_offset


def step_windows(trace: Trace) -> list[tuple[str, int, int]]:
    """(name, start, end) of every ProfilerStep#N on a CPU lane, by start (first of a name);
    found once (each summary asks several times: 14 ms a time at 1M slices)."""
    return list(trace.derive("step windows", lambda: _step_windows(trace)))


def _step_windows(trace: Trace) -> list[tuple[str, int, int]]:
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
    last step runs on after it). Without steps, or when the CPU and GPU clocks disagree
    (clock.py), the GPU's span, from its first work to the end
    of its last (TraceLens's window: the CPU-only lead-in is reported apart), or the whole trace
    when it has no GPU work."""
    steps = step_windows(trace)
    work = gpu_work_rows(trace)
    if not steps or clock_offset(trace) is not None:  # off the CPU's clock, the GPU's own span
        if not len(work):
            return 0, max(trace.span_ns, 1)
        s = trace.slices
        return int(s.start[work].min()), max(int(s.end[work].max()), int(s.start[work].min()) + 1)
    t0, t1 = min(w[1] for w in steps), max(w[2] for w in steps)
    if len(work):
        t0 = min(t0, int(trace.slices.start[work].min()))
        t1 = max(t1, int(trace.slices.end[work].max()))
    return t0, t1


def launch_window(trace: Trace) -> tuple[int, int]:
    """Where the launches of the profiled window's work are: the window itself, or for a trace
    without steps (judged over the GPU's span) the whole trace."""
    if step_windows(trace) and clock_offset(trace) is None:
        return profiled_window(trace)
    return 0, max(trace.span_ns, 1)


def step_at(trace: Trace, t: int) -> tuple[str, int, int] | None:
    """The step (name, start, end) whose CPU span holds time `t`, or None."""
    return next((w for w in step_windows(trace) if w[1] <= t < w[2]), None)
