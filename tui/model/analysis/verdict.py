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

from dataclasses import dataclass

import numpy as np

from ..timescale import format_duration
from ..trace import Trace
from .attribution import attribute

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
    work_start: np.ndarray  # per launched piece of work, by launch start: when it ran
    work_end: np.ndarray

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
        s.start[work],
        s.end[work],
    )
    return index


def judge_step(trace: Trace, t0: int, t1: int) -> Verdict:
    """The verdict of a step whose CPU ran in [t0, t1), by the GPU work it launched there.

    A pipelined step's kernels run on into the next step's CPU span (or after the last one):
    they are still this step's. Its wall time runs from its start to the end of its CPU span or
    of its last GPU work, whichever is later; busy is the union of its own work in it.
    """
    index = _work_index(trace)
    calls, launch_cpu, gpu_started, pieces, short = index.launched(t0, t1)
    a, b = np.searchsorted(index.launch_start, [t0, t1], side="left")
    starts, ends = index.work_start[a:b], index.work_end[a:b]
    end = max(t1, int(ends.max())) if len(ends) else t1
    evidence = Evidence(
        max(end - t0, 1),
        _union(starts, ends),
        calls,
        launch_cpu,
        gpu_started,
        short / pieces if pieces else 0.0,
    )
    return Verdict(_label(evidence, has_work=bool(pieces)), evidence)


def _union(starts: np.ndarray, ends: np.ndarray) -> int:
    """Total length of the union of intervals."""
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    new = np.concatenate(([True], starts[1:] > reach[:-1]))
    firsts = np.flatnonzero(new)
    return int((np.maximum.reduceat(ends, firsts) - starts[firsts]).sum())


def judge(trace: Trace, t0: int, t1: int) -> Verdict:
    """The verdict for the window [t0, t1): all GPU work that ran in it, whoever launched it."""
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
    return format_duration(ns)
