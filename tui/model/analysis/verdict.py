"""What bounds a window: the verdict and its evidence, from measured quantities only.

For a window (one profiler step, or the summary's window):

- GPU busy: the union of GPU work over the window's wall time;
- communication: collectives (gpu_time.py); exposed communication runs while no compute does;
- launch cost: CPU time spent in the launch calls against the GPU time they started;
- short work: the share of the pieces of GPU work started that ran shorter than their launch
  (for a call that started several, a CUDA graph launch, their sum);
- what the CPU does while the GPU is idle: the share of the idle time covered by DataLoader
  calls, by CPU calls that wait for the GPU, and the op or annotation names covering most of it.

The rules and their thresholds: verdict_rules.py.
"""

from __future__ import annotations

import msgspec
import numpy as np

from ..intervals import merge
from ..patterns import DATALOADER_NAME, PROFILER_STEP
from ..trace import Trace
from .attribution import attribute, op_tree
from .clock import clock_offset
from .gpu_time import Busy, GpuTime, busy, gpu_time, gpu_time_of
from .syncs import blocking_copies, waiting_syncs
from .verdict_rules import COVERS_SHOWN, MOSTLY_IDLE, SAME_IDLE, Evidence, label, reason


class Verdict(msgspec.Struct, frozen=True):
    label: str
    evidence: Evidence
    window: tuple[int, int]  # what it measured: the window, or a step's own GPU span
    time: GpuTime

    @property
    def reason(self) -> str:
        """The evidence in words (built when asked: a trace can have thousands of steps)."""
        return reason(self.label, self.evidence)


class _WorkIndex(msgspec.Struct, frozen=True):
    """Prefix sums that answer any window's verdict numbers with binary searches."""

    busy: Busy  # when the GPU runs anything
    launch_start: np.ndarray  # per launched piece of work, by launch start
    launch_cpu_before: np.ndarray  # prefix sums (0 first) of: launch call time (once a call),
    gpu_before: np.ndarray  # GPU time started, and pieces shorter than their launch
    short_before: np.ndarray
    calls_before: np.ndarray
    work_end: np.ndarray  # per launched piece of work, by launch start: when it ended
    piece: np.ndarray  # per launched piece of work, by launch start: its attribute().work index
    reach_before: np.ndarray  # the latest end of the pieces launched before each (0 first)
    unlaunched_start: np.ndarray  # GPU work whose launch is not in the trace, by start
    unlaunched: np.ndarray  # their attribute().work indices

    def idle(self, t0: int, t1: int) -> tuple[np.ndarray, np.ndarray]:
        """The stretches of [t0, t1) where no GPU work runs (sorted, disjoint)."""
        return _complement(self.busy.union_start, self.busy.union_end, t0, t1)

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
    launched = att.launch >= 0
    launch, work = att.launch[launched], att.work[launched]
    order = np.lexsort((launch, s.start[launch]))
    launch, work = launch[order], work[order]
    piece = np.flatnonzero(launched)[order]
    orphans = np.flatnonzero(~launched)
    orphans = orphans[np.argsort(s.start[att.work[orphans]], kind="stable")]
    ends = s.end[work]
    reach = np.maximum.accumulate(ends) if len(ends) else ends
    reach_before = np.concatenate(([np.iinfo(np.int64).min], reach)).astype(np.int64)
    first_of_call = (
        np.concatenate(([True], launch[1:] != launch[:-1])) if len(launch) else (np.zeros(0, bool))
    )

    def prefix(values: np.ndarray) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(values))).astype(np.int64)

    # A piece is short when all its call started ran shorter than the call: one kernel per
    # call mostly, but a CUDA graph launch starts hundreds, and their sum is what it bought.
    calls = np.flatnonzero(first_of_call)
    per_call = np.add.reduceat(s.dur[work], calls) if len(calls) else np.zeros(0, np.int64)
    bought = np.repeat(per_call, np.diff(np.r_[calls, len(work)])) if len(calls) else per_call

    index = _WorkIndex(
        busy(trace),
        s.start[launch],
        prefix(np.where(first_of_call, s.dur[launch], 0)),
        prefix(s.dur[work]),
        prefix(bought < s.dur[launch]),
        prefix(first_of_call),
        s.end[work],
        piece,
        reach_before,
        s.start[att.work[orphans]],
        orphans,
    )
    return index


def judge_step(trace: Trace, t0: int, t1: int, names: bool = False) -> Verdict:
    """The verdict of a step whose CPU ran in [t0, t1), by the GPU work it launched there (and
    work with no launch in the trace that started there).

    A pipelined step's kernels run on into the next step's CPU span, behind the work of the
    step before: its busy time counts only its own work, over its own GPU span. That span runs
    from its CPU start, or from when the GPU finished the work launched before it if that is
    later (but no later than its own first piece), to the end of its CPU span or of its last
    piece, whichever is later: a stall before its first kernel (data loading) is its idle time,
    the neighbours' work is not its busy time. The launch numbers are those of its CPU span.
    With `names`, the evidence names what covers its idle time (one step's summary asks).
    """
    index = _work_index(trace)
    launched = index.launched(t0, t1)
    a, b = np.searchsorted(index.launch_start, [t0, t1], side="left")
    c, d = np.searchsorted(index.unlaunched_start, [t0, t1], side="left")
    own = np.concatenate((index.piece[a:b], index.unlaunched[c:d])).astype(np.int64)
    s, work = trace.slices, attribute(trace).work[own]
    start, end = t0, t1
    if len(work) and clock_offset(trace) is not None:  # the CPU span is on another clock
        start, end = int(s.start[work].min()), int(s.end[work].max())
    elif len(work):
        start = max(t0, min(int(s.start[work].min()), int(index.reach_before[a])))
        end = max(t1, int(s.end[work].max()))
    alone = len(work) == 0 or int(s.start[work].min()) >= start  # every own piece inside
    if alone and index.busy.overlapping(start, end) == len(own):  # only its own work: the fast path
        time, idle = gpu_time(trace, start, end), index.idle(start, end)
    else:
        order = np.argsort(s.start[work], kind="stable")
        time = gpu_time_of(trace, own, start, end)
        idle = _complement(*merge(s.start[work][order], s.end[work][order]), start, end)
    return _verdict(trace, start, end, launched, time, idle, names)


KEY = "verdict "  # the start of a window's slot in `trace.derived` (a model cache may fill it)


def judge(trace: Trace, t0: int, t1: int, launched_in: tuple[int, int] | None = None) -> Verdict:
    """The verdict for the window [t0, t1): all GPU work that ran in it, whoever launched it,
    with the names covering most of its idle time; the launch numbers are those of the calls
    in `launched_in` (default the window: a trace without steps is judged over the GPU's span,
    and its launches come before that span starts)."""
    l0, l1 = launched_in or (t0, t1)

    def judged() -> Verdict:
        index = _work_index(trace)
        time = gpu_time(trace, t0, t1)
        return _verdict(trace, t0, t1, index.launched(l0, l1), time, index.idle(t0, t1), True)

    # The header's verdict is the stats pane's first one too (the profiled window): kept.
    return trace.derive(f"{KEY}{t0} {t1} {l0} {l1}", judged)


def _verdict(
    trace: Trace,
    t0: int,
    t1: int,
    launched: tuple[int, int, int, int, int],
    time: GpuTime,
    idle: tuple[np.ndarray, np.ndarray],
    names: bool = False,
) -> Verdict:
    calls, launch_cpu, gpu_started, pieces, short = launched
    idle_start, idle_end = idle
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
        int((idle_end - idle_start).sum()),
        _covered(trace, dataloader_rows(trace), idle_start, idle_end),
        _covered(trace, waiting_syncs(trace), idle_start, idle_end),
        _covered(trace, blocking_copies(trace), idle_start, idle_end),
        _covering_names(trace, idle_start, idle_end, t1 - t0) if names else (),
    )
    found = label(evidence, has_work=bool(time.busy_ns or pieces))
    return Verdict(found, evidence, (t0, t1), time)


def _complement(
    starts: np.ndarray, ends: np.ndarray, t0: int, t1: int
) -> tuple[np.ndarray, np.ndarray]:
    """The parts of [t0, t1) that sorted disjoint intervals leave free."""
    a = int(np.searchsorted(ends, t0, side="right"))
    b = int(np.searchsorted(starts, t1, side="left"))
    inner_start, inner_end = np.clip(starts[a:b], t0, t1), np.clip(ends[a:b], t0, t1)
    free_start = np.concatenate(([t0], inner_end))
    free_end = np.concatenate((inner_start, [t1]))
    keep = free_end > free_start
    return free_start[keep].astype(np.int64), free_end[keep].astype(np.int64)


def _covered(trace: Trace, rows: np.ndarray, idle_start: np.ndarray, idle_end: np.ndarray) -> int:
    """How much of the idle stretches the slices `rows` cover (each instant once)."""
    if len(rows) == 0 or len(idle_start) == 0:
        return 0
    s = trace.slices
    order = np.argsort(s.start[rows], kind="stable")
    start, end = merge(s.start[rows][order], s.end[rows][order])
    return int(_idle_in(idle_start, idle_end, start, end).sum())


def idle_covered(trace: Trace, rows: np.ndarray, t0: int, t1: int) -> np.ndarray:
    """Per slice of `rows`: how much of the GPU's idle time in [t0, t1) it covers."""
    idle_start, idle_end = _work_index(trace).idle(t0, t1)
    if len(rows) == 0 or len(idle_start) == 0:
        return np.zeros(len(rows), np.int64)
    s = trace.slices
    return _idle_in(idle_start, idle_end, s.start[rows], s.end[rows])


def idle_under(trace: Trace, rows: np.ndarray, t0: int, t1: int) -> int:
    """The GPU's idle time in [t0, t1) inside the union of the slices `rows` (overlapping and
    nested ones counted once)."""
    return _covered(trace, rows, *_work_index(trace).idle(t0, t1))


def _idle_in(
    idle_start: np.ndarray, idle_end: np.ndarray, start: np.ndarray, end: np.ndarray
) -> np.ndarray:
    """Idle time inside each interval [start, end)."""
    inside: np.ndarray = np.subtract(
        _idle_before(idle_start, idle_end, end), _idle_before(idle_start, idle_end, start)
    )
    return inside


def _idle_before(idle_start: np.ndarray, idle_end: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Idle time before each of the times `t`."""
    before = np.concatenate(([0], np.cumsum(idle_end - idle_start)))
    k = np.searchsorted(idle_start, t, side="right")  # stretches starting at or before t
    last = np.maximum(k - 1, 0)
    inside = np.where(k > 0, np.minimum(t, idle_end[last]) - idle_start[last], 0)
    total: np.ndarray = before[last] * (k > 0) + inside
    return total


def dataloader_rows(trace: Trace) -> np.ndarray:
    def find() -> np.ndarray:
        named = trace.name_test(DATALOADER_NAME.search)
        return np.flatnonzero(trace.kind_mask("cpu") & named[trace.slices.name]).astype(np.int64)

    return trace.derive("dataloader_rows", find)


def _covering_names(
    trace: Trace, idle_start: np.ndarray, idle_end: np.ndarray, wall: int
) -> tuple[tuple[str, int], ...]:
    """The op and annotation names whose slices spend at least MOSTLY_IDLE of their time with
    the GPU idle, by how much idle time they cover. Steps and the names that span most of the
    window (the root Python frames) hold all of its idle time and say nothing of the cause."""
    s = trace.slices
    ops = np.flatnonzero(op_tree(trace).is_op)
    if len(ops) == 0 or len(idle_start) == 0:
        return ()
    lo, hi = int(idle_start[0]), int(idle_end[-1])
    ops = ops[(s.start[ops] < hi) & (s.end[ops] > lo)]
    if len(ops) == 0:  # a window (a marked range) where no op runs while the GPU idles
        return ()
    # Each name's slices merged (a recursive frame counts its time once), all names at once:
    # sort by name then start, and keep the running end within a name.
    name = s.name[ops].astype(np.int64)
    order = np.lexsort((s.start[ops], name))
    ops, name = ops[order], name[order]
    start, end = np.clip(s.start[ops], lo, hi), np.clip(s.end[ops], lo, hi)
    first = np.concatenate(([True], name[1:] != name[:-1]))
    group = np.cumsum(first) - 1
    shift = np.int64(hi - lo + 1) * group  # ends of later names never reach back
    reach = np.maximum.accumulate(end - lo + shift) - shift + lo
    new = first | np.concatenate(([True], start[1:] > reach[:-1]))
    heads = np.flatnonzero(new)
    m_start, m_end = start[heads], np.maximum.reduceat(reach, heads)
    m_name = name[heads]
    covered = _idle_in(idle_start, idle_end, m_start, m_end)
    names, at = np.unique(m_name, return_inverse=True)
    by_name = np.bincount(at, weights=covered)
    own = np.bincount(at, weights=m_end - m_start)
    found = []
    for k in np.flatnonzero((by_name > 0) & (by_name >= MOSTLY_IDLE * own) & (own < 0.9 * wall)):
        text = trace.names[int(names[k])]
        # The DataLoader's own frames are its cause already, named once as "DataLoader".
        if not PROFILER_STEP.match(text) and not DATALOADER_NAME.search(text):
            found.append((int(by_name[k]), -int(own[k]), text, int(k)))
    found.sort(key=lambda c: (-c[0], c[1], c[2]))  # the most idle time, then the outermost
    kept: list[tuple[int, int, str, int]] = []
    # Each name's merged intervals are one run (sorted by name, then start).
    bounds = np.concatenate(([0], np.cumsum(np.bincount(at, minlength=len(names)))))

    def intervals(k: int) -> tuple[np.ndarray, np.ndarray]:
        return m_start[bounds[k] : bounds[k + 1]], m_end[bounds[k] : bounds[k + 1]]

    for cand in found:
        if len(kept) == COVERS_SHOWN:
            break
        inner = intervals(cand[3])
        if not any(_inside(idle_start, idle_end, inner, intervals(k[3]), k[0]) for k in kept):
            kept.append(cand)
    return tuple((text, ns) for ns, _, text, _ in kept)


def _inside(
    idle_start: np.ndarray,
    idle_end: np.ndarray,
    inner: tuple[np.ndarray, np.ndarray],
    outer: tuple[np.ndarray, np.ndarray],
    covered_outer: int,
) -> bool:
    """Whether one name's idle time lies within another's (a frame further down the same call
    chain: the same cause named again): together, their (start, end) intervals cover no more
    than the outer's alone, within SAME_IDLE."""
    start, end = np.concatenate((inner[0], outer[0])), np.concatenate((inner[1], outer[1]))
    order = np.argsort(start, kind="stable")
    u_start, u_end = merge(start[order], end[order])
    union = int(_idle_in(idle_start, idle_end, u_start, u_end).sum())
    return union <= (1 + SAME_IDLE) * covered_outer
