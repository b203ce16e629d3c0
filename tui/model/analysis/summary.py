"""The summary of a window: key_averages footers, GPU use, idle time, launches, the verdict,
synchronisation, memory, and every step's verdict."""

from __future__ import annotations

import itertools

import msgspec
import numpy as np
from msgspec.structs import replace

from ..trace import Trace
from .attribution import attribute
from .clock import clock_offset
from .compiled import Compiled, compiled
from .gaps import idle_gaps
from .gpu_time import GpuTime
from .graphs import graphs
from .memory import OUTSIDE_OPS, peaks
from .ops import op_stats
from .scope import Scope
from .steps import launch_window, profiled_window, step_windows
from .syncs import syncs_in
from .verdict import Verdict, judge, judge_step

# Idle time of a window that no gap between two pieces of GPU work holds: before its first work,
# after its last, or (for a step's own GPU span) while only other steps' work ran.
OUTSIDE_GAPS = "outside gaps"


class StepRow(msgspec.Struct, frozen=True):
    name: str
    start_ns: int
    dur_ns: int
    verdict: Verdict
    # How long its GPU span (verdict.window) shares with the next step's: pipelined steps'
    # spans overlap, and each step's busy time counts only its own work there.
    overlap_ns: int = 0

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.dur_ns


class MemoryPeak(msgspec.Struct, frozen=True):
    """A device's highest allocated memory: how much, when, in which step and op."""

    device: str
    allocated: int
    reserved: int
    ts: int
    step: str | None
    op: str | None


class Summary(msgspec.Struct, frozen=True):
    """The summary strip of a window: GPU use, idle time, launches, the verdict, synchronisation
    and memory (the key_averages footers are the table's totals: present.tables)."""

    window: tuple[int, int]
    gpu_time: GpuTime  # computation, communication, copies and their overlap
    idle_ns: dict[str, int]  # by cause: no GPU work on any stream, adding up to the idle time
    stream_idle_ns: dict[str, int]  # by cause, summed over the streams
    median_launch_delay_ns: int | None
    verdict: Verdict
    steps: list[StepRow] = msgspec.field(default_factory=list)
    sync_calls: int = 0
    sync_ns: int = 0
    memory_peaks: list[MemoryPeak] = msgspec.field(default_factory=list)
    # (name, self bytes summed over its calls, calls), by self bytes
    top_memory_ops: list[tuple[str, int, int]] = msgspec.field(default_factory=list)
    # CUDA graph replays, most time first
    graphs: list[GraphLine] = msgspec.field(default_factory=list)
    compiled: Compiled | None = None  # torch.compile's regions (None: the trace has none)
    truncated: bool = False  # the file ended early: the numbers and verdict cover what was read
    # A trace without steps is judged over the GPU's span: the CPU-only time before its first
    # GPU work and after its last (ns), reported apart.
    cpu_only_ns: tuple[int, int] = (0, 0)
    # The CPU and GPU clocks disagree (clock.py): GPU work starts at least this long after its
    # launch even on an idle GPU, and the window is the GPU's own span. None: they agree.
    clock_offset_ns: int | None = None


class GraphLine(msgspec.Struct, frozen=True):
    """A CUDA graph's replays launched in the window."""

    label: str
    replays: int
    kernels: int  # per replay
    gpu_ns: int
    share: float  # of all GPU work that ran in the window


STEPS_KEY = "step_rows"  # kept with the cached model (passes/facts.py): 0.6 s at 3,324 steps


def step_rows(trace: Trace) -> list[StepRow]:
    """Every step with its verdict (computed once per trace: the pane asks at each scope)."""
    return trace.derive(STEPS_KEY, lambda: _step_rows(trace))


def _step_rows(trace: Trace) -> list[StepRow]:
    rows = [StepRow(name, a, b - a, judge_step(trace, a, b)) for name, a, b in step_windows(trace)]
    for i, (row, after) in enumerate(itertools.pairwise(rows)):
        (a0, a1), (b0, b1) = row.verdict.window, after.verdict.window
        rows[i] = replace(row, overlap_ns=max(0, min(a1, b1) - max(a0, b0)))
    return rows


def summarize(
    trace: Trace, window: tuple[int, int] | None = None, scope: Scope | None = None
) -> Summary:
    """The summary of [t0, t1) (the scope's window, else the profiled window), with every step's
    verdict. Memory peaks are those of the window, or of the trace without one.

    A subtree scope covers its root's span and is judged as a step is: by the GPU work launched
    there, wherever it ran; its memory ops are those of the subtree.
    """
    window = window or (scope.window(trace) if scope is not None else None)
    t0, t1 = window if window is not None else profiled_window(trace)
    # The memory peaks of a scope without a window are those of the whole trace, as its table.
    memory_window = (t0, t1) if window is not None else (None, None)
    subtree = scope is not None and scope.root >= 0
    # What the CPU did is taken on its own clock, over the launches' window: the GPU's span,
    # the default window without steps or with clocks that disagree, is on the GPU's.
    l0, l1 = launch_window(trace) if window is None else (t0, t1)
    stats = op_stats(trace, scope if subtree else Scope(l0, l1))
    gaps = idle_gaps(trace)
    att = attribute(trace)
    s = trace.slices
    launched = att.launch >= 0
    launch_start = s.start[np.maximum(att.launch, 0)]
    mine = launched & (launch_start >= l0) & (launch_start < l1)
    delays = s.start[att.work[mine]] - launch_start[mine]
    graph_lines = _graph_lines(trace, mine, t0, t1)
    regions = compiled(trace, mine)
    all_steps = step_windows(trace)
    offset = clock_offset(trace)
    steps = [row for row in step_rows(trace) if row.start_ns >= l0 and row.end_ns <= l1]
    sync_calls, sync_ns = syncs_in(trace, l0, l1)
    memory_peaks = [
        MemoryPeak(
            p.device,
            p.allocated,
            p.reserved,
            p.ts,
            next((n for n, a, b in all_steps if a <= p.ts < b), None),
            trace.slice_name(p.op) if p.op >= 0 else None,
        )
        for p in peaks(trace, *memory_window)
    ]
    by_self = sorted(
        (
            (o.self_cpu_mem + o.self_cuda_mem, o.name, o.calls)
            for o in stats
            if o.name != OUTSIDE_OPS and o.self_cpu_mem + o.self_cuda_mem > 0
        ),
        reverse=True,
    )
    # One step's summary is that step's verdict, over its own GPU span, as in its strip row.
    is_step = subtree or any((a, b) == (t0, t1) for _, a, b in all_steps)
    verdict = judge_step(trace, t0, t1, names=True) if is_step else judge(trace, t0, t1, (l0, l1))
    g0, g1 = verdict.window
    idle = gaps.idle_ns(g0, g1, whole_device=True)
    idle[OUTSIDE_GAPS] = verdict.evidence.idle_ns - sum(idle.values())
    return Summary(
        (t0, t1),
        verdict.time,
        idle,
        gaps.idle_ns(g0, g1, whole_device=False),
        int(np.median(delays)) if len(delays) else None,
        verdict,
        steps,
        sync_calls,
        sync_ns,
        memory_peaks,
        [(name, size, calls) for size, name, calls in by_self[:5]],
        graph_lines,
        regions if regions.regions else None,
        trace.format.truncated,
        (t0, max(trace.span_ns - t1, 0)) if window is None and not all_steps else (0, 0),
        offset.lag_ns if offset is not None else None,
    )


def _graph_lines(trace: Trace, launched_here: np.ndarray, t0: int, t1: int) -> list[GraphLine]:
    """The graphs whose replays were launched in the window (`launched_here`: per piece of GPU
    work, whether its launch is), with their share of all GPU work that ran in [t0, t1) (as
    `summary --graphs` takes it of all GPU work in the trace)."""
    found = graphs(trace)
    if not found.replays:
        return []
    att = attribute(trace)
    s = trace.slices
    here = att.work[launched_here]
    starts = s.start[att.work]
    total = int(s.dur[att.work[(starts >= t0) & (starts < t1)]].sum())
    of = found.graph_of[here]
    lines = []
    for g, graph in enumerate(found.graphs):
        rows = here[of == g]
        if not len(rows):
            continue
        replays = len(np.unique(att.launch[launched_here][of == g]))
        gpu = int(s.dur[rows].sum())
        lines.append(
            GraphLine(graph.label, replays, graph.kernels, gpu, gpu / total if total else 0.0)
        )
    lines.sort(key=lambda g: -g.gpu_ns)
    return lines
