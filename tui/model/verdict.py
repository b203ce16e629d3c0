"""Overhead-bound or compute-bound: the summary numbers and the verdict, with their evidence.

The verdict for a window (one profiler step, or the whole profiled span) comes from measured
quantities only:

- GPU busy: the union of GPU work (kernels, memcpy, memset) over the window's wall time;
- launch cost: CPU time spent in the launch calls against the GPU time they started;
- short kernels: the share of GPU work that ran for less time than its launch call took.

Thresholds (also in the README):

- `no GPU activity`: no GPU work in the window (a CPU-only trace is never guessed at);
- `compute-bound`: GPU busy >= BUSY_HIGH;
- `overhead-bound`: GPU busy < BUSY_LOW, and launches cost at least the GPU time they started or
  at least SHORT_KERNELS of the work is shorter than its launch;
- `mixed`: anything else (including a mostly idle GPU whose launches are cheap: the CPU is busy
  with something other than launching).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .attribution import attribute
from .gaps import CAUSES, idle_gaps
from .patterns import PROFILER_STEP
from .stats import Scope, op_stats
from .trace import Trace

BUSY_LOW = 0.30
BUSY_HIGH = 0.70
SHORT_KERNELS = 0.5


@dataclass(frozen=True)
class Evidence:
    """The measured quantities behind a verdict (times in ns)."""

    wall_ns: int
    gpu_busy_ns: int
    launches: int
    launch_cpu_ns: int
    launched_gpu_ns: int
    short_work_share: float

    @property
    def gpu_busy(self) -> float:
        return self.gpu_busy_ns / self.wall_ns if self.wall_ns else 0.0


@dataclass(frozen=True)
class Verdict:
    label: str
    reason: str
    evidence: Evidence


@dataclass(frozen=True)
class StepRow:
    name: str
    start_ns: int
    dur_ns: int
    verdict: Verdict


@dataclass(frozen=True)
class Summary:
    """The summary strip: key_averages footers, GPU use, idle time, launches, the verdict."""

    window: tuple[int, int]
    self_cpu_ns: int
    self_cuda_ns: int
    idle_ns: dict[str, int]
    median_launch_delay_ns: int | None
    verdict: Verdict
    steps: list[StepRow] = field(default_factory=list)


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


def judge(trace: Trace, t0: int, t1: int) -> Verdict:
    """The verdict for [t0, t1)."""
    s = trace.slices
    att = attribute(trace)
    wall = max(t1 - t0, 1)
    busy = _union_within(s.start[att.work], s.start[att.work] + s.dur[att.work], t0, t1)
    launched = att.launch >= 0
    launch_start = s.start[np.maximum(att.launch, 0)]
    mine = launched & (launch_start >= t0) & (launch_start < t1)
    launch_rows = np.unique(att.launch[mine])
    launch_cpu = int(s.dur[launch_rows].sum())
    gpu_started = int(s.dur[att.work[mine]].sum())
    short = float(np.mean(s.dur[att.work[mine]] < s.dur[att.launch[mine]])) if mine.any() else 0.0
    evidence = Evidence(wall, busy, len(launch_rows), launch_cpu, gpu_started, short)
    return Verdict(*_label(evidence, has_work=bool(busy or mine.any())), evidence)


def _label(e: Evidence, has_work: bool) -> tuple[str, str]:
    busy = f"GPU busy {e.gpu_busy:.1%} of {_ms(e.wall_ns)}"
    launch = (
        f"launch calls took {_ms(e.launch_cpu_ns)} of CPU for {_ms(e.launched_gpu_ns)} of "
        f"GPU work; {e.short_work_share:.0%} of it ran shorter than its launch"
    )
    if not has_work:
        return "no GPU activity", "no kernel, memcpy or memset in this window"
    if e.gpu_busy >= BUSY_HIGH:
        return "compute-bound", f"{busy}: the GPU is the bottleneck; {launch}"
    if e.gpu_busy < BUSY_LOW:
        if e.launch_cpu_ns >= e.launched_gpu_ns or e.short_work_share >= SHORT_KERNELS:
            return "overhead-bound", f"{busy}: the CPU cannot launch fast enough; {launch}"
        return "mixed", f"{busy}, yet launches are cheap: the CPU is busy elsewhere; {launch}"
    return "mixed", f"{busy}; {launch}"


def _ms(ns: int) -> str:
    from .timescale import format_duration

    return format_duration(ns)


def _union_within(start: np.ndarray, end: np.ndarray, t0: int, t1: int) -> int:
    """Length of the union of intervals, clipped to [t0, t1)."""
    a, b = np.clip(start, t0, t1), np.clip(end, t0, t1)
    keep = b > a
    a, b = a[keep], b[keep]
    if len(a) == 0:
        return 0
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    reach = np.maximum.accumulate(b)
    # A new run starts where an interval begins after everything before it ended.
    new = np.concatenate(([True], a[1:] > reach[:-1]))
    run_start = a[new]
    run_end = np.maximum.reduceat(b, np.flatnonzero(new))
    return int((run_end - run_start).sum())


def summarize(trace: Trace, window: tuple[int, int] | None = None) -> Summary:
    """The summary of [t0, t1) (the profiled window by default), with every step's verdict."""
    t0, t1 = window if window is not None else profiled_window(trace)
    stats = op_stats(trace, Scope(t0, t1))
    gaps = idle_gaps(trace)
    idle = {cause: 0 for cause in CAUSES}
    starts, ends = np.clip(gaps.start, t0, t1), np.clip(gaps.end, t0, t1)
    for cause_id, cause in enumerate(CAUSES):
        pick = gaps.cause == cause_id
        idle[cause] = int((ends[pick] - starts[pick]).clip(0).sum())
    att = attribute(trace)
    s = trace.slices
    launched = att.launch >= 0
    launch_start = s.start[np.maximum(att.launch, 0)]
    mine = launched & (launch_start >= t0) & (launch_start < t1)
    delays = s.start[att.work[mine]] - launch_start[mine]
    steps = [
        StepRow(name, a, b - a, judge(trace, a, b))
        for name, a, b in step_windows(trace)
        if a >= t0 and b <= t1
    ]
    return Summary(
        (t0, t1),
        sum(o.self_cpu_ns for o in stats),
        sum(o.self_cuda_ns for o in stats),
        idle,
        int(np.median(delays)) if len(delays) else None,
        judge(trace, t0, t1),
        steps,
    )
