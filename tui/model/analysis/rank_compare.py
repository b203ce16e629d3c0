"""Ranks side by side: collectives matched across ranks, who waits for whom, and each step.

A collective is matched across ranks by its process group, its kind and its place among that
group's collectives of that kind on each rank (or by the group's sequence number, where every
rank's trace carries one). Per matched collective, as the TensorBoard plugin and TraceLens
define it: "transfer" is the shortest time any rank spent in it, and a rank's "wait" is the rest
of its own time in it. The straggler is the rank the others wait for: the one that arrives last
(starts its kernel last) at the most collectives, on the absolute clock the traces carry.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable

import msgspec

from .collectives import Collective
from .rank_stats import RankStats

# How much longer than the other ranks' median a step's own work must be to be marked slow.
SLOW_STEP = 1.2

# nccl-tests' bus bandwidth factors (PERFORMANCE.md): what each rank's links carry for a
# collective of the given size, as a share of it, for n ranks.
_BUS_FACTOR: dict[str, Callable[[int], float]] = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}


class Matched(msgspec.Struct, frozen=True):
    """One collective, as every rank that took part ran it."""

    kind: str
    group: str
    index: int  # its place among the group's collectives of its kind (or its sequence number)
    ranks: tuple[int, ...]
    starts_ns: tuple[int | None, ...]  # absolute, per rank (None: that trace has no clock)
    durs_ns: tuple[int, ...]
    bytes: int | None

    @property
    def transfer_ns(self) -> int:
        return min(self.durs_ns)

    @property
    def waits_ns(self) -> tuple[int, ...]:
        return tuple(d - self.transfer_ns for d in self.durs_ns)

    @property
    def wait_ns(self) -> int:
        """All ranks' wait in it, summed."""
        return sum(self.waits_ns)

    @property
    def last_rank(self) -> int | None:
        """The rank that arrived last (None when all arrived at once, or without a clock on
        every rank)."""
        if any(s is None for s in self.starts_ns) or not self.skew_ns:
            return None
        starts = [s for s in self.starts_ns if s is not None]
        return self.ranks[starts.index(max(starts))]

    @property
    def skew_ns(self) -> int | None:
        """From the first rank's arrival to the last's."""
        starts = [s for s in self.starts_ns if s is not None]
        return max(starts) - min(starts) if len(starts) == len(self.starts_ns) else None

    @property
    def bus_bandwidth(self) -> float | None:
        """Bytes per second over the transfer time, as nccl-tests' busbw."""
        factor = _BUS_FACTOR.get(self.kind)
        if self.bytes is None or factor is None or self.transfer_ns <= 0:
            return None
        return self.bytes / (self.transfer_ns / 1e9) * factor(len(self.ranks))


class RankRow(msgspec.Struct, frozen=True):
    stats: RankStats
    rank: int
    step_median_ns: int | None
    slowest_step: tuple[str, int] | None  # (name, CPU time)
    wait_ns: int  # in matched collectives
    own_work_ns: int  # its steps' time less its collective wait (its window's, without steps)
    collective_ns: int  # all its time in matched collectives
    arrival_ns: int | None  # median lateness at its collectives (from the first rank's arrival)
    last_arrivals: int


class RankReport(msgspec.Struct, frozen=True):
    rows: list[RankRow]  # by rank
    collectives: list[Matched]
    steps: list[str]
    # Per rank (rows' order) and step (steps' order): the step's CPU time less its collective
    # wait, i.e. the rank's own work in it (None: the rank has no such step).
    own_work: list[list[int | None]]
    slow_cells: set[tuple[int, int]]  # (row, step) whose own work stands out
    slowest: int | None  # a rank: the most own work (its steps' time less collective wait)
    straggler: int | None
    notes: list[str] = msgspec.field(default_factory=list)


def compare(ranks: list[RankStats]) -> RankReport:
    """The rank table of a set of rank traces (one each, with a rank)."""
    ranks = sorted(ranks, key=lambda r: r.rank if r.rank is not None else -1)
    notes = _job_notes(ranks)
    matched, unmatched = _match(ranks)
    if unmatched:
        notes.append(f"{unmatched:,} collectives appear on one rank only and are not compared")
    order = [r.rank if r.rank is not None else -1 for r in ranks]
    waits: dict[int, int] = defaultdict(int)
    inside: dict[int, int] = defaultdict(int)
    late: dict[int, list[int]] = defaultdict(list)
    last: Counter[int] = Counter()
    for m in matched:
        first = min((s for s in m.starts_ns if s is not None), default=None)
        for rank, start, dur, wait in zip(m.ranks, m.starts_ns, m.durs_ns, m.waits_ns, strict=True):
            waits[rank] += wait
            inside[rank] += dur
            if start is not None and first is not None and m.skew_ns is not None:
                late[rank].append(start - first)
        if m.last_rank is not None:
            last[m.last_rank] += 1
    if matched and any(m.skew_ns is None for m in matched):
        notes.append("a trace has no absolute clock: arrival order and skew are not known")
    rows = [
        RankRow(
            r,
            rank,
            int(statistics.median(d for _, _, d in r.steps)) if r.steps else None,
            max(((n, d) for n, _, d in r.steps), key=lambda x: x[1], default=None),
            waits[rank],
            max(sum(d for _, _, d in r.steps) if r.steps else r.window_ns, 0) - waits[rank],
            inside[rank],
            int(statistics.median(late[rank])) if late[rank] else None,
            last[rank],
        )
        for r, rank in zip(ranks, order, strict=True)
    ]
    steps, own = _own_work(ranks, matched)
    return RankReport(
        rows,
        matched,
        steps,
        own,
        _slow_cells(own),
        _slowest(rows),
        last.most_common(1)[0][0] if last else None,
        notes,
    )


def _job_notes(ranks: list[RankStats]) -> list[str]:
    notes = []
    for r in ranks:
        if r.truncated:
            notes.append(f"rank {r.rank}: its trace is truncated: its row covers what was read")
        elif r.skipped:
            notes.append(f"rank {r.rank}: {r.skipped:,} events of its trace were skipped")
        if not r.steps and any(other.steps for other in ranks):
            notes.append(f"rank {r.rank}: its trace has no ProfilerStep#N")
    sizes = sorted({r.info.world_size for r in ranks if r.info.world_size is not None})
    if len(sizes) > 1:
        notes.append(f"mixed world sizes in one folder: {', '.join(map(str, sizes))}")
    backends = sorted({r.info.backend for r in ranks if r.info.backend})
    if len(backends) > 1:
        notes.append(f"mixed jobs in one folder: backends {', '.join(backends)}")
    have = {r.rank for r in ranks if r.rank is not None}
    if sizes:
        missing = sorted(set(range(max(sizes))) - have)
        if missing:
            shown = ", ".join(map(str, missing[:12])) + (", ..." if len(missing) > 12 else "")
            notes.append(f"{len(missing)} of {max(sizes)} ranks have no trace here: {shown}")
    return notes


def _keys(collectives: tuple[Collective, ...]) -> dict[tuple[str, str, int], Collective]:
    """Each collective under (group, kind, place): its sequence number when all have one."""
    by_seq = all(c.seq is not None for c in collectives)
    seen: Counter[tuple[str, str]] = Counter()
    out = {}
    for c in collectives:
        place = c.seq if by_seq and c.seq is not None else seen[(c.group, c.kind)]
        seen[(c.group, c.kind)] += 1
        out[(c.group, c.kind, place)] = c
    return out


def _match(ranks: list[RankStats]) -> tuple[list[Matched], int]:
    keyed = [(r, _keys(r.collectives)) for r in ranks if r.rank is not None]
    every = sorted({k for _, keys in keyed for k in keys}, key=lambda k: (k[0], k[1], k[2]))
    matched, unmatched = [], 0
    for key in every:
        taking = [(r, keys[key]) for r, keys in keyed if key in keys]
        if len(taking) < 2:
            unmatched += 1
            continue
        sizes = {c.bytes for _, c in taking if c.bytes is not None}
        matched.append(
            Matched(
                key[1],
                key[0],
                key[2],
                tuple(r.rank for r, _ in taking if r.rank is not None),
                tuple(r.base_ns + c.start_ns if r.base_ns is not None else None for r, c in taking),
                tuple(c.dur_ns for _, c in taking),
                max(sizes) if sizes else None,
            )
        )
    matched.sort(key=lambda m: min((s for s in m.starts_ns if s is not None), default=0))
    return matched, unmatched


def _own_work(
    ranks: list[RankStats], matched: list[Matched]
) -> tuple[list[str], list[list[int | None]]]:
    names: list[str] = []
    for r in ranks:
        names += [n for n, _, _ in r.steps if n not in names]
    # Each rank's waits by its own collective start, to charge them to its steps.
    waits: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for m in matched:
        for rank, start, wait in zip(m.ranks, m.starts_ns, m.waits_ns, strict=True):
            if start is not None:
                waits[rank].append((start, wait))
    table = []
    for r in ranks:
        row: list[int | None] = [None] * len(names)
        steps = list(r.steps)
        for i, (name, start, dur) in enumerate(steps):
            end = steps[i + 1][1] if i + 1 < len(steps) else None
            waited = 0
            if r.base_ns is not None and r.rank is not None:
                a = r.base_ns + start
                b = r.base_ns + end if end is not None else None
                waited = sum(w for s, w in waits[r.rank] if s >= a and (b is None or s < b))
            row[names.index(name)] = max(dur - waited, 0)
        table.append(row)
    return names, table


def _slow_cells(own: list[list[int | None]]) -> set[tuple[int, int]]:
    cells = set()
    for j in range(len(own[0]) if own else 0):
        column = [(i, row[j]) for i, row in enumerate(own) if row[j] is not None]
        for i, value in column:
            others = [v for k, v in column if k != i and v is not None]
            if others and value is not None and value > SLOW_STEP * statistics.median(others):
                cells.add((i, j))
    return cells


def _slowest(rows: list[RankRow]) -> int | None:
    """The rank with the most own work: a rank's step time is mostly its wait for the slowest
    one, when ranks synchronise every step. None for a tie."""
    if len(rows) < 2:
        return None
    ranked = sorted(rows, key=lambda r: r.own_work_ns)
    return ranked[-1].rank if ranked[-1].own_work_ns != ranked[-2].own_work_ns else None
