"""The verdict's rules: thresholds, the evidence they read, and the label and reason they give.

Rules, in this order (thresholds also in the README):

- `no GPU activity`: no GPU work in the window (a CPU-only trace is never guessed at);
- `communication-bound`: exposed communication is at least COMM_BOUND of busy time, and either
  the GPU is busy (>= BUSY_HIGH) or it waits on its peers longer than it is idle;
- `compute-bound`: GPU busy >= BUSY_HIGH;
- `data-loading-bound`: DataLoader calls cover at least CAUSE_SHARE of the idle time;
- `sync-bound`: CPU calls waiting for the GPU cover at least CAUSE_SHARE of the idle time;
- `copy-bound`: blocking copies during which the GPU ran (almost) nothing cover at least
  CAUSE_SHARE of the idle time (the CPU waits for the copy, the host or the link, not for GPU
  work: syncs.waiting_syncs);
- `overhead-bound`: GPU busy < BUSY_LOW, the window holds launch calls, and they cost at least
  the GPU time they started or at least SHORT_KERNELS of the pieces of work are shorter than
  their launch;
- `mixed`: anything else (including a mostly idle GPU whose launches are cheap: the CPU is busy
  with something other than launching, named in the evidence).
"""

from __future__ import annotations

import msgspec

from ..text import counted
from ..timescale import format_duration

BUSY_LOW = 0.30
BUSY_HIGH = 0.70
SHORT_KERNELS = 0.5
COMM_BOUND = 0.30
CAUSE_SHARE = 0.5
# A name is said to cover the idle time when at least this much of its own time is GPU idle.
MOSTLY_IDLE = 0.5
COVERS_SHOWN = 3
# A name whose idle time, joined to a name already named, adds less than this share to it is
# the same cause (a frame further down one call chain): the verdict names each cause once.
SAME_IDLE = 0.02


class Evidence(msgspec.Struct, frozen=True):
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
    copy_idle_ns: int = 0  # idle time that blocking copies with nothing in flight cover
    covers: tuple[tuple[str, int], ...] = ()  # names covering most idle time, with how much

    @property
    def gpu_busy(self) -> float:
        return self.gpu_busy_ns / self.wall_ns if self.wall_ns else 0.0

    def idle_share(self, ns: int) -> float:
        return ns / self.idle_ns if self.idle_ns else 0.0

    @property
    def launches_outweigh_work(self) -> bool:
        """The launch calls took at least the GPU time they started, or most of the work they
        started ran shorter than its launch. Without launch calls (CUPTI's range profiler
        records ranges, not kernels and their launches) launch overhead is not known: never
        true on 0 ns against 0."""
        return bool(self.launches) and (
            self.launch_cpu_ns >= self.launched_gpu_ns or self.short_work_share >= SHORT_KERNELS
        )


def label(e: Evidence, has_work: bool) -> str:
    if not has_work:
        return "no GPU activity"
    waiting = e.gpu_busy_ns and e.exposed_comm_ns >= COMM_BOUND * e.gpu_busy_ns
    if waiting and (e.gpu_busy >= BUSY_HIGH or e.exposed_comm_ns >= e.idle_ns):
        return "communication-bound"
    if e.gpu_busy >= BUSY_HIGH:
        return "compute-bound"
    if e.idle_share(e.dataloader_idle_ns) >= CAUSE_SHARE:
        return "data-loading-bound"
    if e.idle_share(e.sync_idle_ns) >= CAUSE_SHARE:
        return "sync-bound"
    if e.idle_share(e.copy_idle_ns) >= CAUSE_SHARE:
        return "copy-bound"
    if e.gpu_busy < BUSY_LOW and e.launches_outweigh_work:
        return "overhead-bound"
    return "mixed"


def reason(label: str, e: Evidence) -> str:
    if label == "no GPU activity":
        return "no GPU work (kernel, copy, set, device event) in this window"
    busy = f"GPU busy {e.gpu_busy:.1%} of {_ms(e.wall_ns)}"
    launch = (
        f"launch calls took {_ms(e.launch_cpu_ns)} of CPU for {_ms(e.launched_gpu_ns)} of GPU "
        f"work; {e.short_work_share:.0%} of the {counted(e.pieces, 'piece')} of GPU work they "
        "started ran shorter than their launch call"
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
        named.append(("blocking copies (the GPU idle)", e.copy_idle_ns))
        named.sort(key=lambda pair: -pair[1])  # the largest share first
        parts = [f"{n} {e.idle_share(ns):.0%}" for n, ns in named if e.idle_share(ns) >= 0.01]
        if parts:
            idle = f"; while the GPU is idle ({_ms(e.idle_ns)}) the CPU is in: " + ", ".join(parts)
    head = {
        "communication-bound": f"{busy}: the GPU waits on its peers",
        "compute-bound": f"{busy}: the GPU is the bottleneck"
        if e.exposed_comm_ns < 0.1 * e.gpu_busy_ns
        else f"{busy}: the GPU is busy, part of it waiting on its peers",
        "data-loading-bound": f"{busy}: the GPU waits for the DataLoader",
        "sync-bound": f"{busy}: the CPU waits for the GPU, and the GPU then waits for the CPU",
        "overhead-bound": f"{busy}: the CPU cannot launch fast enough",
        "copy-bound": f"{busy}: the CPU is held in blocking copies while the GPU runs nothing"
        " (a copy, not a wait for GPU work: pageable host memory, the link, or a queue waiting"
        " on an event from outside the trace)",
    }.get(label)
    if not e.launches:
        launch = "no launch calls in this window, so what launching costs is not known"
    if head is None:
        head = (
            f"{busy}, yet launches are cheap: the CPU is busy elsewhere"
            if e.gpu_busy < BUSY_LOW and e.launches
            else busy
        )
    return f"{head}{comm}{idle}; {launch}"


def _ms(ns: int) -> str:
    return format_duration(ns)
