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

from .allocations import OUTSIDE_OPS, peaks
from .attribution import attribute
from .gaps import CAUSES, idle_gaps
from .patterns import PROFILER_STEP
from .stats import Scope, op_stats
from .syncs import syncs_in
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
    evidence: Evidence

    @property
    def reason(self) -> str:
        """The evidence in words (built when asked: a trace can have thousands of steps)."""
        return _reason(self.label, self.evidence)


@dataclass(frozen=True)
class StepRow:
    name: str
    start_ns: int
    dur_ns: int
    verdict: Verdict


@dataclass(frozen=True)
class MemoryPeak:
    """A device's highest allocated memory: how much, when, in which step and op."""

    device: str
    allocated: int
    reserved: int
    ts: int
    step: str | None
    op: str | None


@dataclass(frozen=True)
class Summary:
    """The summary strip: key_averages footers, GPU use, idle time, launches, the verdict,
    synchronisation and memory."""

    window: tuple[int, int]
    self_cpu_ns: int
    self_cuda_ns: int
    idle_ns: dict[str, int]
    median_launch_delay_ns: int | None
    verdict: Verdict
    steps: list[StepRow] = field(default_factory=list)
    sync_calls: int = 0
    sync_ns: int = 0
    memory_peaks: list[MemoryPeak] = field(default_factory=list)
    top_memory_ops: list[tuple[str, int]] = field(default_factory=list)  # by self bytes


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


@dataclass(frozen=True)
class _WorkIndex:
    """Prefix sums that answer any window's verdict numbers with binary searches."""

    union_start: np.ndarray  # the union of GPU work, as sorted disjoint intervals
    union_end: np.ndarray
    union_before: np.ndarray  # busy time before each interval
    launch_start: np.ndarray  # per launched piece of work, by launch start
    launch_cpu_before: np.ndarray  # prefix sums (0 first) of: launch call time (once a call),
    gpu_before: np.ndarray  # GPU time started, and pieces shorter than their launch
    short_before: np.ndarray
    calls_before: np.ndarray

    def busy(self, t0: int, t1: int) -> int:
        def before(t: int) -> int:
            k = int(np.searchsorted(self.union_start, t, side="right")) - 1
            if k < 0:
                return 0
            inside = min(t - int(self.union_start[k]), int(self.union_end[k] - self.union_start[k]))
            return int(self.union_before[k]) + inside

        return before(t1) - before(t0)

    def launched(self, t0: int, t1: int) -> tuple[int, int, int, int, int]:
        """(launch calls, their CPU time, GPU time started, pieces, pieces shorter than launch)."""
        a, b = np.searchsorted(self.launch_start, [t0, t1], side="left")
        return (
            int(self.calls_before[b] - self.calls_before[a]),
            int(self.launch_cpu_before[b] - self.launch_cpu_before[a]),
            int(self.gpu_before[b] - self.gpu_before[a]),
            int(b - a),
            int(self.short_before[b] - self.short_before[a]),
        )


def _work_index(trace: Trace) -> _WorkIndex:
    return trace.derive("work_index", lambda: _build_work_index(trace))


def _build_work_index(trace: Trace) -> _WorkIndex:
    s = trace.slices
    att = attribute(trace)
    start, end = s.start[att.work], s.start[att.work] + s.dur[att.work]
    order = np.argsort(start, kind="stable")
    start, end = start[order], end[order]
    if len(start):
        reach = np.maximum.accumulate(end)
        new = np.concatenate(([True], start[1:] > reach[:-1]))
        u_start = start[new]
        u_end = np.maximum.reduceat(end, np.flatnonzero(new))
    else:
        u_start = u_end = np.zeros(0, np.int64)
    u_before = np.concatenate(([0], np.cumsum(u_end - u_start)))[:-1]
    launched = att.launch >= 0
    launch, work = att.launch[launched], att.work[launched]
    order = np.lexsort((launch, s.start[launch]))
    launch, work = launch[order], work[order]
    first_of_call = (
        np.concatenate(([True], launch[1:] != launch[:-1])) if len(launch) else (np.zeros(0, bool))
    )

    def prefix(values: np.ndarray) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(values))).astype(np.int64)

    index = _WorkIndex(
        u_start,
        u_end,
        u_before.astype(np.int64),
        s.start[launch],
        prefix(np.where(first_of_call, s.dur[launch], 0)),
        prefix(s.dur[work]),
        prefix(s.dur[work] < s.dur[launch]),
        prefix(first_of_call),
    )
    return index


def judge(trace: Trace, t0: int, t1: int) -> Verdict:
    """The verdict for [t0, t1)."""
    index = _work_index(trace)
    calls, launch_cpu, gpu_started, pieces, short = index.launched(t0, t1)
    busy = index.busy(t0, t1)
    evidence = Evidence(
        max(t1 - t0, 1), busy, calls, launch_cpu, gpu_started, short / pieces if pieces else 0.0
    )
    return Verdict(_label(evidence, has_work=bool(busy or pieces)), evidence)


def _label(e: Evidence, has_work: bool) -> str:
    if not has_work:
        return "no GPU activity"
    if e.gpu_busy >= BUSY_HIGH:
        return "compute-bound"
    if e.gpu_busy < BUSY_LOW and (
        e.launch_cpu_ns >= e.launched_gpu_ns or e.short_work_share >= SHORT_KERNELS
    ):
        return "overhead-bound"
    return "mixed"


def _reason(label: str, e: Evidence) -> str:
    if label == "no GPU activity":
        return "no kernel, memcpy or memset in this window"
    busy = f"GPU busy {e.gpu_busy:.1%} of {_ms(e.wall_ns)}"
    launch = (
        f"launch calls took {_ms(e.launch_cpu_ns)} of CPU for {_ms(e.launched_gpu_ns)} of "
        f"GPU work; {e.short_work_share:.0%} of it ran shorter than its launch"
    )
    if label == "compute-bound":
        return f"{busy}: the GPU is the bottleneck; {launch}"
    if label == "overhead-bound":
        return f"{busy}: the CPU cannot launch fast enough; {launch}"
    if e.gpu_busy < BUSY_LOW:
        return f"{busy}, yet launches are cheap: the CPU is busy elsewhere; {launch}"
    return f"{busy}; {launch}"


def _ms(ns: int) -> str:
    from .timescale import format_duration

    return format_duration(ns)


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
    all_steps = step_windows(trace)
    steps = [
        StepRow(name, a, b - a, judge(trace, a, b))
        for name, a, b in all_steps
        if a >= t0 and b <= t1
    ]
    sync_calls, sync_ns = syncs_in(trace, t0, t1)
    memory_peaks = [
        MemoryPeak(
            p.device,
            p.allocated,
            p.reserved,
            p.ts,
            next((n for n, a, b in all_steps if a <= p.ts < b), None),
            trace.slice_name(p.op) if p.op >= 0 else None,
        )
        for p in peaks(trace)
    ]
    by_self = sorted(
        (
            (o.self_cpu_mem + o.self_cuda_mem, o.name)
            for o in stats
            if o.name != OUTSIDE_OPS and o.self_cpu_mem + o.self_cuda_mem > 0
        ),
        reverse=True,
    )
    return Summary(
        (t0, t1),
        sum(o.self_cpu_ns for o in stats),
        sum(o.self_cuda_ns for o in stats),
        idle,
        int(np.median(delays)) if len(delays) else None,
        judge(trace, t0, t1),
        steps,
        sync_calls,
        sync_ns,
        memory_peaks,
        [(name, size) for size, name in by_self[:5]],
    )
