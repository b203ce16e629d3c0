"""What bounds a window: the verdict and its evidence, from measured quantities only.

For a window (one profiler step, or the summary's window):

- GPU busy: the union of GPU work over the window's wall time;
- communication: collectives (gpu_time.py); exposed communication runs while no compute does;
- launch cost: CPU time spent in the launch calls against the GPU time they started;
- short work: the share of the pieces of GPU work started that ran shorter than their launch;
- what the CPU does while the GPU is idle: the share of the idle time covered by DataLoader
  calls, by CPU calls that wait for the GPU, and the op or annotation names covering most of it.

Rules, in this order (thresholds also in the README):

- `no GPU activity`: no GPU work in the window (a CPU-only trace is never guessed at);
- `communication-bound`: exposed communication is at least COMM_BOUND of busy time: the GPU is
  waiting on its peers;
- `compute-bound`: GPU busy >= BUSY_HIGH;
- `data-loading-bound`: DataLoader calls cover at least CAUSE_SHARE of the idle time;
- `sync-bound`: CPU calls waiting for the GPU cover at least CAUSE_SHARE of the idle time;
- `overhead-bound`: GPU busy < BUSY_LOW, and launches cost at least the GPU time they started or
  at least SHORT_KERNELS of the pieces of work are shorter than their launch;
- `mixed`: anything else (including a mostly idle GPU whose launches are cheap: the CPU is busy
  with something other than launching, named in the evidence).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..patterns import DATALOADER_NAME, PROFILER_STEP
from ..timescale import format_duration
from ..trace import Trace
from .attribution import attribute, op_tree
from .gpu_time import GpuTime, gpu_time, interval_union
from .syncs import sync_rows

BUSY_LOW = 0.30
BUSY_HIGH = 0.70
SHORT_KERNELS = 0.5
COMM_BOUND = 0.30
CAUSE_SHARE = 0.5
# A name is said to cover the idle time when at least this much of its own time is GPU idle.
MOSTLY_IDLE = 0.5
COVERS_SHOWN = 3


@dataclass(frozen=True)
class Evidence:
    """The measured quantities behind a verdict (times in ns)."""

    wall_ns: int
    gpu_busy_ns: int
    launches: int
    launch_cpu_ns: int
    launched_gpu_ns: int
    short_work_share: float  # of the pieces of GPU work started in the window
    pieces: int = 0
    comm_ns: int = 0
    exposed_comm_ns: int = 0
    idle_ns: int = 0
    dataloader_idle_ns: int = 0  # idle time that DataLoader calls cover
    sync_idle_ns: int = 0  # idle time that CPU calls waiting for the GPU cover
    covers: tuple[tuple[str, int], ...] = ()  # names covering most idle time, with how much

    @property
    def gpu_busy(self) -> float:
        return self.gpu_busy_ns / self.wall_ns if self.wall_ns else 0.0

    def idle_share(self, ns: int) -> float:
        return ns / self.idle_ns if self.idle_ns else 0.0


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
    work_end: np.ndarray  # per launched piece of work, by launch start: when it ended
    work_piece: np.ndarray  # and its index into attribute(trace).work

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
    piece = np.flatnonzero(att.launch >= 0)
    launch, work = att.launch[piece], att.work[piece]
    order = np.lexsort((launch, s.start[launch]))
    launch, work, piece = launch[order], work[order], piece[order]
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
        s.end[work],
        piece,
    )
    return index


def judge_step(trace: Trace, t0: int, t1: int) -> Verdict:
    """The verdict of a step whose CPU ran in [t0, t1), by the GPU work it launched there.

    A pipelined step's kernels run on into the next step's CPU span (or after the last one):
    they are still this step's. Its wall time runs from its start to the end of its CPU span or
    of its last GPU work, whichever is later; busy is the union of its own work in it.
    """
    index = _work_index(trace)
    a, b = np.searchsorted(index.launch_start, [t0, t1], side="left")
    ends = index.work_end[a:b]
    end = max(t1, int(ends.max())) if len(ends) else t1
    pieces = index.work_piece[a:b]
    return _verdict(trace, t0, end, index.launched(t0, t1), gpu_time(trace, t0, end, pieces))


def judge(trace: Trace, t0: int, t1: int) -> Verdict:
    """The verdict for the window [t0, t1): all GPU work that ran in it, whoever launched it,
    with the names covering most of its idle time."""
    index = _work_index(trace)
    return _verdict(trace, t0, t1, index.launched(t0, t1), gpu_time(trace, t0, t1), names=True)


def _verdict(
    trace: Trace,
    t0: int,
    t1: int,
    launched: tuple[int, int, int, int, int],
    time: GpuTime,
    names: bool = False,
) -> Verdict:
    calls, launch_cpu, gpu_started, pieces, short = launched
    idle_start, idle_end = _idle(trace, t0, t1, time)
    evidence = Evidence(
        max(t1 - t0, 1),
        time.busy_ns,
        calls,
        launch_cpu,
        gpu_started,
        short / pieces if pieces else 0.0,
        pieces,
        time.communication_ns,
        time.exposed_comm_ns,
        time.idle_ns,
        _covered(trace, _dataloader_rows(trace), idle_start, idle_end),
        _covered(trace, sync_rows(trace), idle_start, idle_end),
        _covering_names(trace, idle_start, idle_end) if names else (),
    )
    return Verdict(_label(evidence, has_work=bool(time.busy_ns or pieces)), evidence)


def _idle(trace: Trace, t0: int, t1: int, time: GpuTime) -> tuple[np.ndarray, np.ndarray]:
    """The stretches of [t0, t1) where no GPU work of the trace runs (sorted, disjoint)."""
    s = trace.slices
    work = attribute(trace).work
    start, end = np.clip(s.start[work], t0, t1), np.clip(s.end[work], t0, t1)
    keep = end > start
    start, end = start[keep], end[keep]
    if time.busy_ns == 0 or len(start) == 0:
        return np.asarray([t0], np.int64), np.asarray([t1], np.int64)
    order = np.argsort(start, kind="stable")
    start, end = start[order], end[order]
    reach = np.maximum.accumulate(end)
    new = np.concatenate(([True], start[1:] > reach[:-1]))
    firsts = np.flatnonzero(new)
    u_start, u_end = start[firsts], np.maximum.reduceat(end, firsts)
    gaps_start = np.concatenate(([t0], u_end))
    gaps_end = np.concatenate((u_start, [t1]))
    keep = gaps_end > gaps_start
    return gaps_start[keep], gaps_end[keep]


def _covered(trace: Trace, rows: np.ndarray, idle_start: np.ndarray, idle_end: np.ndarray) -> int:
    """How much of the idle stretches the slices `rows` cover (each instant once)."""
    if len(rows) == 0 or len(idle_start) == 0:
        return 0
    s = trace.slices
    lo, hi = int(idle_start[0]), int(idle_end[-1])
    start, end = np.clip(s.start[rows], lo, hi), np.clip(s.end[rows], lo, hi)
    idle = int((idle_end - idle_start).sum())
    cover = interval_union(start, end)
    both = interval_union(np.concatenate((idle_start, start)), np.concatenate((idle_end, end)))
    return idle + cover - both


def _dataloader_rows(trace: Trace) -> np.ndarray:
    def find() -> np.ndarray:
        named = np.asarray([bool(DATALOADER_NAME.search(n)) for n in trace.names] + [False])
        return np.flatnonzero(trace.kind_mask("cpu") & named[trace.slices.name]).astype(np.int64)

    return trace.derive("dataloader_rows", find)


def _covering_names(
    trace: Trace, idle_start: np.ndarray, idle_end: np.ndarray
) -> tuple[tuple[str, int], ...]:
    """The op and annotation names whose slices spend most of their time with the GPU idle,
    by how much idle time they cover."""
    s = trace.slices
    ops = np.flatnonzero(op_tree(trace).is_op)
    if len(ops) == 0 or len(idle_start) == 0:
        return ()
    # Only slices that touch an idle stretch can cover one.
    k = np.searchsorted(idle_end, s.start[ops], side="right")
    touch = (k < len(idle_start)) & (s.end[ops] > idle_start[np.minimum(k, len(idle_start) - 1)])
    ops = ops[touch]
    found = []
    for name in np.unique(s.name[ops]).tolist():
        if PROFILER_STEP.match(trace.names[int(name)]):
            continue  # a step holds all of its idle time: that says nothing of the cause
        rows = ops[s.name[ops] == name]
        covered = _covered(trace, rows, idle_start, idle_end)
        own = interval_union(
            np.clip(s.start[rows], idle_start[0], idle_end[-1]),
            np.clip(s.end[rows], idle_start[0], idle_end[-1]),
        )
        if covered and covered >= MOSTLY_IDLE * own:
            found.append((covered, trace.names[int(name)]))
    found.sort(key=lambda c: (-c[0], c[1]))
    return tuple((n, ns) for ns, n in found[:COVERS_SHOWN])


def _label(e: Evidence, has_work: bool) -> str:
    if not has_work:
        return "no GPU activity"
    if e.gpu_busy_ns and e.exposed_comm_ns >= COMM_BOUND * e.gpu_busy_ns:
        return "communication-bound"
    if e.gpu_busy >= BUSY_HIGH:
        return "compute-bound"
    if e.idle_share(e.dataloader_idle_ns) >= CAUSE_SHARE:
        return "data-loading-bound"
    if e.idle_share(e.sync_idle_ns) >= CAUSE_SHARE:
        return "sync-bound"
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
        f"launch calls took {_ms(e.launch_cpu_ns)} of CPU for {_ms(e.launched_gpu_ns)} of GPU "
        f"work; {e.short_work_share:.0%} of the {e.pieces:,} pieces of GPU work they started "
        "ran shorter than their launch call"
    )
    comm = ""
    if e.comm_ns:
        comm = (
            f"; communication {_ms(e.comm_ns)}, {_ms(e.exposed_comm_ns)} of it exposed "
            f"({e.exposed_comm_ns / max(e.gpu_busy_ns, 1):.0%} of busy time)"
        )
    idle = ""
    if e.idle_ns:
        named = [("DataLoader", e.dataloader_idle_ns), ("syncs", e.sync_idle_ns), *e.covers]
        parts = [f"{n} {e.idle_share(ns):.0%}" for n, ns in named if e.idle_share(ns) >= 0.01]
        if parts:
            idle = f"; while the GPU is idle ({_ms(e.idle_ns)}) the CPU is in: " + ", ".join(parts)
    head = {
        "communication-bound": f"{busy}: the GPU waits on its peers",
        "compute-bound": f"{busy}: the GPU is the bottleneck",
        "data-loading-bound": f"{busy}: the GPU waits for the DataLoader",
        "sync-bound": f"{busy}: the CPU waits for the GPU, and the GPU then waits for the CPU",
        "overhead-bound": f"{busy}: the CPU cannot launch fast enough",
    }.get(label)
    if head is None:
        head = (
            f"{busy}, yet launches are cheap: the CPU is busy elsewhere"
            if e.gpu_busy < BUSY_LOW
            else busy
        )
    return f"{head}{comm}{idle}; {launch}"


def _ms(ns: int) -> str:
    return format_duration(ns)
