"""What to change next: a recommendation per cause the summary measured, with its evidence, the
slice that shows it, and an upper bound on the time it could save (what would go away if the
cause did), ranked by it.

A rule that does not apply stays silent. Thresholds, here and nowhere else:
- a rule with a time bound fires when the bound is at least MIN_SAVING of the window's wall time;
- memory headroom fires when the peak reserved memory is at most HEADROOM of the device's and
  the GPU is not busy (below verdict_rules.BUSY_HIGH) or launches outweigh the work;
- fragmentation fires when, at the peak, the allocator holds at least FRAGMENTED of its reserved
  memory unallocated, and at least FRAGMENTED_BYTES.
The idle-time bounds read the summary's evidence (verdict_rules.Evidence), so the advice and the
verdict never disagree on a number. Memory advice has no time bound: it comes after the rest.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Literal, cast

import msgspec
import numpy as np

from ..patterns import CONVOLUTION_KERNEL, PROFILER_STEP, is_python_frame
from ..text import counted
from ..timescale import format_duration as _ms
from ..trace import Trace
from .attribution import attribute
from .collectives import exposed_by_kind
from .fusion import fusion_runs
from .gaps import CAUSES, HOST_WAIT
from .memory import device_name
from .replay_work import BEGIN_CAPTURE
from .roofline import trace_peaks
from .scope import Scope
from .summary import OUTSIDE_GAPS, Summary, summarize
from .sync_sites import sync_sites
from .syncs import blocking_copies
from .tensor_cores import fp32_on_cuda_cores, tensor_core_gain
from .verdict import dataloader_rows, idle_covered, idle_under
from .verdict_rules import BUSY_HIGH

MIN_SAVING = 0.05  # of the window's wall time: below it a rule stays silent
HEADROOM = 0.5  # of the device's memory
FRAGMENTED = 0.25  # of the reserved memory, unallocated at the peak
FRAGMENTED_BYTES = 2**30
SITES_SHOWN = 3

Rule = Literal[
    "data-loading",
    "syncs",
    "host-copies",
    "communication",
    "launch-overhead",
    "tensor-cores",
    "fusion",
    "memory-headroom",
    "fragmentation",
]


class Target(msgspec.Struct, frozen=True):
    """The slice that shows a recommendation's evidence best."""

    row: int
    name: str
    lane: str
    start_ns: int


class Recommendation(msgspec.Struct, frozen=True):
    rule: Rule
    title: str
    change: str  # what to try
    evidence: str  # what was measured, in words
    bound_ns: int  # over the summary's window (0: no time bound, memory advice)
    steps: int  # in the window (0: the trace has none)
    target: Target | None = None

    @property
    def per_step_ns(self) -> int | None:
        return self.bound_ns // self.steps if self.steps else None


ADVICE_KEPT = 16  # scopes' advice kept per trace, least recently used dropped first


def advice_for(
    trace: Trace, scope: Scope | None = None, summary: Summary | None = None
) -> list[Recommendation]:
    """The advice of a scope (default: the trace), kept for the last ADVICE_KEPT scopes (the
    pane and the header ask again); `summary`: that scope's summary, where already made."""
    scope = scope or Scope()
    kept = cast(OrderedDict[Scope, list[Recommendation]], trace.derive("advice", OrderedDict))
    found = kept.get(scope)
    if found is None:
        found = advise(trace, summary or summarize(trace, scope=scope))
        kept[scope] = found
        while len(kept) > ADVICE_KEPT:
            kept.popitem(last=False)
    kept.move_to_end(scope)
    return found


def advise(trace: Trace, summary: Summary) -> list[Recommendation]:
    """The recommendations for the summary's window: the largest time bound first, then the
    memory advice."""
    e = summary.verdict.evidence
    if not e.wall_ns or not e.gpu_busy_ns:
        return []
    steps = len(summary.steps)
    floor = MIN_SAVING * e.wall_ns
    timed = [r for rule in _TIMED if (r := rule(trace, summary)) is not None]
    found = [
        Recommendation(*r, steps=steps, target=_target(trace, t)) for r, t in timed if r[4] >= floor
    ]
    found.sort(key=lambda r: -r.bound_ns)
    return found + [Recommendation(*r, steps=steps) for r in _memory(trace, summary)]


# (rule, title, change, evidence, bound_ns) and the target row.
_Found = tuple[tuple[Rule, str, str, str, int], int]


def _data_loading(trace: Trace, summary: Summary) -> _Found | None:
    e = summary.verdict.evidence
    if not e.dataloader_idle_ns:
        return None
    return (
        "data-loading",
        "The GPU waits for the DataLoader",
        "raise DataLoader(num_workers=...), set pin_memory=True and persistent_workers=True, "
        "prefetch the next batch (prefetch_factor)",
        f"DataLoader calls cover {_ms(e.dataloader_idle_ns)} of the GPU's {_ms(e.idle_ns)} "
        "idle time",
        e.dataloader_idle_ns,
    ), _most_idle(trace, summary, dataloader_rows(trace))


def _syncs(trace: Trace, summary: Summary) -> _Found | None:
    e = summary.verdict.evidence
    if not e.sync_idle_ns:
        return None
    sites = sync_sites(trace, *summary.verdict.window)
    steps = len(summary.steps)
    named = "; ".join(
        f"{s.site}: {counted(s.calls, 'call')}"
        + (f" ({s.calls / steps:.3g}/step)" if steps else "")
        + f", {_ms(s.idle_ns)} of GPU idle"
        for s in sites[:SITES_SHOWN]
    )
    return (
        "syncs",
        "CPU calls wait for the GPU",
        "move .item(), .cpu(), .tolist() and torch.cuda.synchronize() out of the step, "
        "batch them, or copy with non_blocking=True",
        f"{counted(summary.sync_calls, 'sync call')} waited {_ms(summary.sync_ns)}, covering "
        f"{_ms(e.sync_idle_ns)} of the GPU's idle time" + (f"; from {named}" if named else ""),
        e.sync_idle_ns,
    ), sites[0].longest if sites else -1


def _host_copies(trace: Trace, summary: Summary) -> _Found | None:
    e = summary.verdict.evidence
    if not e.copy_idle_ns:
        return None
    return (
        "host-copies",
        "Blocking copies leave the GPU idle",
        "pin the host memory (pin_memory=True, tensor.pin_memory()) and copy with "
        "non_blocking=True",
        f"blocking copies with nothing else in flight cover {_ms(e.copy_idle_ns)} of the GPU's "
        "idle time",
        e.copy_idle_ns,
    ), _most_idle(trace, summary, blocking_copies(trace))


def _communication(trace: Trace, summary: Summary) -> _Found | None:
    time = summary.gpu_time
    if not time.exposed_comm_ns:
        return None
    kinds = exposed_by_kind(trace, *summary.verdict.window)
    named = ", ".join(
        f"{k.kind} {_ms(k.exposed_ns)} ({counted(k.calls, 'call')})" for k in kinds[:3]
    )
    return (
        "communication",
        "Communication is not overlapped with compute",
        "overlap it: tune DDP's bucket_cap_mb, FSDP's forward/backward prefetch, no_sync() for "
        "gradient accumulation",
        f"{_ms(time.exposed_comm_ns)} of {_ms(time.communication_ns)} of collectives ran with no "
        "compute beside them" + (f": {named}" if named else ""),
        time.exposed_comm_ns,
    ), kinds[0].most if kinds else -1


def _launch_overhead(trace: Trace, summary: Summary) -> _Found | None:
    e = summary.verdict.evidence
    # A run that captures graphs already uses them, and the GPU idles through a capture by
    # design (its launches run only when it is replayed): no advice to capture the step.
    if not e.launches_outweigh_work or len(trace.rows_named(BEGIN_CAPTURE.match)):
        return None
    # A step captured in a graph replays with none of the host's work between its kernels (the
    # Python, the dispatch and the launch calls alike): what it can give back is the time the
    # GPU waited on the host while the launching threads were at recorded work (not a stretch
    # the profiler saw nothing in, such as a compile or a sleep), less what the DataLoader,
    # syncs and copies explain.
    host = summary.idle_ns.get(CAUSES[HOST_WAIT], 0) + summary.idle_ns.get(OUTSIDE_GAPS, 0)
    at_work = idle_under(trace, _launching_threads_work(trace), *summary.verdict.window)
    explained = e.dataloader_idle_ns + e.sync_idle_ns + e.copy_idle_ns
    waited = max(min(host, at_work) - explained, 0)
    return (
        "launch-overhead",
        "Kernel launches cost more than the kernels",
        'capture the step in a CUDA graph (torch.compile(mode="reduce-overhead"), '
        "torch.cuda.graphs) or give each kernel more work (a larger batch)",
        f"{e.launches:,} launch calls took {_ms(e.launch_cpu_ns)} of CPU for "
        f"{_ms(e.launched_gpu_ns)} of GPU work; {e.short_work_share:.0%} of the {e.pieces:,} "
        f"pieces of work ran shorter than their launch; the GPU waited {_ms(waited)} on the "
        "host for its next work",
        waited,
    ), -1


def _launching_threads_work(trace: Trace) -> np.ndarray:
    """The slices of the threads that launched GPU work, but their ProfilerStep spans and their
    Python frames (the outermost of which cover the whole run, recorded work or not)."""
    launches = attribute(trace).launch
    lanes = np.unique(trace.lane_indices(launches[launches >= 0]))
    if not len(lanes):
        return np.zeros(0, np.int64)
    rows = np.concatenate([np.arange(trace.lanes[k].lo, trace.lanes[k].hi) for k in lanes])
    steps = trace.name_test(PROFILER_STEP.match)[trace.slices.name[rows]]
    frames = trace.category_test(is_python_frame)[trace.slices.cat[rows]]
    kept: np.ndarray = rows[~steps & ~frames]
    return kept


def _tensor_cores(trace: Trace, summary: Summary) -> _Found | None:
    work = fp32_on_cuda_cores(trace, *summary.verdict.window)
    if not work.gpu_ns:
        return None
    peaks = trace_peaks(trace)
    mode, ratio = tensor_core_gain(peaks)
    if mode == "tf32":
        # cuDNN's convolutions take TF32 by default; only a run that turned it off needs it back.
        convolutions = any(CONVOLUTION_KERNEL.search(name) for name in work.names)
        cudnn = ", torch.backends.cudnn.allow_tf32 = True (its default)," if convolutions else ""
        change = (
            f'torch.set_float32_matmul_precision("high") (TF32 matmuls){cudnn} or bf16 autocast'
        )
    else:  # a device without TF32 (V100): 16-bit tensor cores only
        change = "torch.autocast(device_type='cuda', dtype=torch.float16) with a GradScaler"
    device = peaks.device if peaks is not None else "an unknown device (the smallest known ratio)"
    return (
        "tensor-cores",
        "fp32 GEMMs and convolutions ran on CUDA cores",
        change,
        f"{counted(work.kernels, 'kernel')} ({_ms(work.gpu_ns)}) ran without tensor cores, "
        f"most in {_bare(work.names[0])}; {mode} peaks {ratio:.3g}x fp32 on {device}",
        round(work.gpu_ns * (1 - 1 / ratio)),
    ), work.longest


def _fusion(trace: Trace, summary: Summary) -> _Found | None:
    runs = fusion_runs(trace, *summary.verdict.window)
    if not runs.runs:
        return None
    change = (
        "these eager kernels ran outside the compiled regions: look for graph breaks "
        "(TORCH_LOGS=graph_breaks) and compile with a backend that fuses (inductor)"
        if summary.compiled is not None
        else "torch.compile the model (Inductor fuses elementwise and normalisation chains)"
    )
    return (
        "fusion",
        "Chains of elementwise kernels could be fused",
        change,
        f"{counted(runs.runs, 'run')} of {runs.kernels:,} elementwise, reduction or normalisation "
        f"kernels ({_ms(runs.gpu_ns)}) one after another, the longest {runs.longest_run}; "
        "fused, each would pass over memory once",
        runs.saving_ns,
    ), runs.first


def _target(trace: Trace, row: int) -> Target | None:
    if row < 0:
        return None
    name, lane = trace.slice_name(row), trace.lane_of(row).name
    return Target(row, name, lane, int(trace.slices.start[row]))


def _most_idle(trace: Trace, summary: Summary, rows: np.ndarray) -> int:
    """The row of `rows` covering the most idle time of the window (-1: none covers any)."""
    if not len(rows):
        return -1
    covered = idle_covered(trace, rows, *summary.verdict.window)
    return int(rows[np.argmax(covered)]) if covered.max() > 0 else -1


_TIMED: tuple[Callable[[Trace, Summary], _Found | None], ...] = (
    _data_loading,
    _syncs,
    _host_copies,
    _communication,
    _launch_overhead,
    _tensor_cores,
    _fusion,
)


def _memory(trace: Trace, summary: Summary) -> list[tuple[Rule, str, str, str, int]]:
    """Headroom for a larger batch and fragmentation, per GPU with allocator records."""
    e = summary.verdict.evidence
    sizes = {
        device_name(1, int(d["id"])): d["totalGlobalMem"]
        for d in trace.devices
        if isinstance(d.get("id"), int) and isinstance(d.get("totalGlobalMem"), int)
    }
    out: list[tuple[Rule, str, str, str, int]] = []
    for peak in summary.memory_peaks:
        size = sizes.get(peak.device.replace("hip:", "cuda:"))
        room = e.gpu_busy < BUSY_HIGH or e.launches_outweigh_work
        if size and peak.reserved and peak.reserved <= HEADROOM * size and room:
            out.append(
                (
                    "memory-headroom",
                    f"{peak.device} has room for a larger batch",
                    "raise the batch size (each kernel gets more work, the GPU idles less)",
                    f"peak reserved {_gib(peak.reserved)} of {_gib(size)} "
                    f"({peak.reserved / size:.0%}); GPU busy {e.gpu_busy:.0%}",
                    0,
                )
            )
        slack = peak.reserved - peak.allocated
        if peak.reserved and slack >= FRAGMENTED * peak.reserved and slack >= FRAGMENTED_BYTES:
            out.append(
                (
                    "fragmentation",
                    f"{peak.device}'s allocator holds memory it cannot use",
                    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                    f"at the peak {_gib(peak.allocated)} allocated of {_gib(peak.reserved)} "
                    f"reserved: {_gib(slack)} ({slack / peak.reserved:.0%}) cached but free",
                    0,
                )
            )
    return out


def _bare(kernel: str) -> str:
    """`void cudnn::detail::dgrad_engine<float, ...>(int, ...)` -> `cudnn::detail::dgrad_engine`."""
    name = kernel.removeprefix("void ")
    cut = min((i for i in (name.find("<"), name.find("(")) if i > 0), default=len(name))
    return name[:cut]


def _gib(n: int) -> str:
    return f"{n / 2**30:.3g} GiB"


SHORT: dict[Rule, str] = {
    "data-loading": "data loading",
    "syncs": "CPU-GPU syncs",
    "host-copies": "blocking copies",
    "communication": "exposed communication",
    "launch-overhead": "launch overhead",
    "tensor-cores": "no tensor cores",
    "fusion": "unfused kernels",
    "memory-headroom": "memory to spare",
    "fragmentation": "fragmented memory",
}


def headline(r: Recommendation) -> str:
    """`data loading, up to 59.3 ms/step`: the header's words for the first next step."""
    if not r.bound_ns:
        return SHORT[r.rule]
    at = "/step" if r.per_step_ns is not None else " in the window"
    return f"{SHORT[r.rule]}, up to {_ms(r.per_step_ns or r.bound_ns)}{at}"


def bound_text(r: Recommendation) -> str:
    """`up to 1.23 ms per step` (or `in the window` without steps; memory advice has none)."""
    if not r.bound_ns:
        return "no time bound"
    if r.per_step_ns is None:
        return f"up to {_ms(r.bound_ns)} in the window"
    return f"up to {_ms(r.per_step_ns)} per step"
