"""What the rank table needs of one rank's trace: small, so that worker processes send it back.

The numbers are those of the rank's own `summary` (one `summarize` of the profiled window), so
that a rank's row and its single-trace summary always agree.
"""

from __future__ import annotations

import msgspec

from ..trace import Trace
from .collectives import Collective, collectives
from .summary import summarize


class DistributedInfo(msgspec.Struct, frozen=True):
    """The job as the trace describes it (`distributedInfo`), else as the file name says."""

    rank: int | None
    world_size: int | None
    backend: str | None

    @staticmethod
    def of(trace: Trace, named_rank: int | None = None) -> DistributedInfo:
        info = trace.metadata.get("distributedInfo")
        info = info if isinstance(info, dict) else {}

        def number(key: str) -> int | None:
            value = info.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        rank = number("rank")
        backend = info.get("backend")
        return DistributedInfo(
            rank if rank is not None else named_rank,
            number("world_size"),
            backend if isinstance(backend, str) else None,
        )


class RankStats(msgspec.Struct, frozen=True):
    """One rank's row: its steps, where its GPU time went, and its collectives.

    Times are ns; `base_ns` is the absolute time of the trace's t=0 (None when the trace does not
    say), which puts every rank's collectives on one clock.
    """

    path: str
    info: DistributedInfo
    base_ns: int | None
    verdict: str
    window_ns: int
    busy_ns: int
    computation_ns: int
    communication_ns: int
    exposed_comm_ns: int
    idle_ns: int
    idle_by_cause: dict[str, int]
    steps: tuple[tuple[str, int, int], ...]  # (ProfilerStep#N, start, CPU time), by start
    collectives: tuple[Collective, ...]
    truncated: bool = False  # the file ended early: its numbers cover what was read
    skipped: int = 0  # events left out

    @property
    def rank(self) -> int | None:
        return self.info.rank


def rank_stats(trace: Trace, named_rank: int | None = None) -> RankStats:
    """`named_rank`: the rank the file's name gives, for a trace without `distributedInfo`."""
    trace.args_reader.open()
    summary = summarize(trace)
    time = summary.gpu_time
    return RankStats(
        trace.path,
        DistributedInfo.of(trace, named_rank),
        trace.base_time_ns,
        summary.verdict.label,
        time.window_ns,
        time.busy_ns,
        time.computation_ns,
        time.communication_ns,
        time.exposed_comm_ns,
        summary.verdict.evidence.idle_ns,
        dict(summary.idle_ns),
        tuple((s.name, s.start_ns, s.dur_ns) for s in summary.steps),
        tuple(collectives(trace)),
        trace.format.truncated,
        sum(trace.skipped.values()),
    )


class RankFailed(msgspec.Struct, frozen=True):
    """A rank whose trace could not be read: its one-line error (what the rank pass returns
    for it instead of its `RankStats`)."""

    rank: int
    path: str
    error: str
