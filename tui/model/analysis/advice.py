"""What to change next: a recommendation per cause the summary measured, with its evidence and
an upper bound on the time it could save (what would go away if the cause did), ranked by it.

A rule that does not apply stays silent: one fires only when its bound is at least MIN_SAVING
of the window's wall time. Each bound reads the summary's evidence (verdict.Evidence), so the
advice and the verdict never disagree on a number.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..timescale import format_duration as _ms
from .summary import Summary

MIN_SAVING = 0.05  # of the window's wall time: below it a rule stays silent


@dataclass(frozen=True)
class Recommendation:
    rule: str  # data-loading, syncs, host-copies, communication, launch-overhead
    title: str
    change: str  # what to try
    evidence: str  # what was measured, in words
    bound_ns: int  # over the summary's window
    steps: int  # in the window (0: the trace has none)

    @property
    def per_step_ns(self) -> int | None:
        return self.bound_ns // self.steps if self.steps else None


def advise(summary: Summary) -> list[Recommendation]:
    """The recommendations for the summary's window, the largest bound first."""
    e = summary.verdict.evidence
    if not e.wall_ns or not e.gpu_busy_ns:
        return []
    steps = len(summary.steps)
    found = []
    explained = e.dataloader_idle_ns + e.sync_idle_ns + e.copy_idle_ns
    # Launch calls can cost at most the idle time no other cause covers, and at most their
    # own CPU time: that is what graphs or compilation could give back.
    launch_bound = min(e.launch_cpu_ns, max(e.idle_ns - explained, 0))
    candidates = [
        (
            "data-loading",
            e.dataloader_idle_ns,
            "The GPU waits for the DataLoader",
            "raise DataLoader(num_workers=...), set pin_memory=True and persistent_workers=True, "
            "prefetch the next batch (prefetch_factor)",
            f"DataLoader calls cover {_ms(e.dataloader_idle_ns)} of the GPU's "
            f"{_ms(e.idle_ns)} idle time",
        ),
        (
            "syncs",
            e.sync_idle_ns,
            "CPU calls wait for the GPU",
            "move .item(), .cpu(), .tolist() and torch.cuda.synchronize() out of the step, "
            "batch them, or copy with non_blocking=True",
            f"{summary.sync_calls:,} sync calls waited {_ms(summary.sync_ns)}; they cover "
            f"{_ms(e.sync_idle_ns)} of the GPU's idle time",
        ),
        (
            "host-copies",
            e.copy_idle_ns,
            "Blocking copies leave the GPU idle",
            "pin the host memory (pin_memory=True, tensor.pin_memory()) and copy with "
            "non_blocking=True",
            f"blocking copies with nothing else in flight cover {_ms(e.copy_idle_ns)} of the "
            "GPU's idle time",
        ),
        (
            "communication",
            summary.gpu_time.exposed_comm_ns,
            "Communication is not overlapped with compute",
            "overlap it: tune DDP's bucket_cap_mb, FSDP's forward/backward prefetch, no_sync() "
            "for gradient accumulation",
            f"{_ms(summary.gpu_time.exposed_comm_ns)} of "
            f"{_ms(summary.gpu_time.communication_ns)} of collectives ran with no compute "
            "beside them",
        ),
        (
            "launch-overhead",
            launch_bound if e.launches_outweigh_work else 0,
            "Kernel launches cost more than the kernels",
            'capture the step in a CUDA graph (torch.compile(mode="reduce-overhead"), '
            "torch.cuda.graphs) or give each kernel more work (a larger batch)",
            f"{e.launches:,} launch calls took {_ms(e.launch_cpu_ns)} of CPU for "
            f"{_ms(e.launched_gpu_ns)} of GPU work; {e.short_work_share:.0%} of the "
            f"{e.pieces:,} pieces of work ran shorter than their launch",
        ),
    ]
    for rule, bound, title, change, evidence in candidates:
        if bound >= MIN_SAVING * e.wall_ns:
            found.append(Recommendation(rule, title, change, evidence, bound, steps))
    return sorted(found, key=lambda r: -r.bound_ns)


def bound_text(r: Recommendation) -> str:
    """`up to 1.23 ms per step` (or `in the window` without steps)."""
    if r.per_step_ns is None:
        return f"up to {_ms(r.bound_ns)} in the window"
    return f"up to {_ms(r.per_step_ns)} per step"
