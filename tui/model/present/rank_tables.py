"""The tables of a rank set: the rank table, the rank x step matrix of own work, and the
collectives that waited longest."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import msgspec

from ..analysis.rank_compare import Matched, RankReport, RankRow
from ..timescale import format_bytes, format_duration
from . import vocabulary as v
from .table_spec import Column, Table, Totals, json_only


class RankLine(msgspec.Struct, frozen=True):
    """One rank of a report (its marks and its steps' cells are the report's)."""

    report: RankReport
    index: int

    @property
    def row(self) -> RankRow:
        return self.report.rows[self.index]


def rank_lines(report: RankReport) -> list[RankLine]:
    return [RankLine(report, i) for i in range(len(report.rows))]


T = TypeVar("T")


def duration(ns: int | None) -> str:
    return format_duration(ns) if ns is not None else "-"


def _marks(line: RankLine) -> str:
    report, rank = line.report, line.row.rank
    marks = [
        m for m, r in (("slowest", report.slowest), ("straggler", report.straggler)) if rank == r
    ]
    return ", ".join(marks) or "-"


def _slowest(line: RankLine) -> str:
    if not line.row.slowest_step:
        return "-"
    name, dur = line.row.slowest_step
    return f"{name.removeprefix('ProfilerStep')} {duration(dur)}"


def _busy(line: RankLine) -> float:
    s = line.row.stats
    return s.busy_ns / s.window_ns if s.window_ns else 0.0


def _steps(line: RankLine) -> object:
    report, i = line.report, line.index
    return [
        {
            "name": name,
            "dur_ns": dur,
            "own_work_ns": report.own_work[i][report.steps.index(name)],
            "slow": (i, report.steps.index(name)) in report.slow_cells,
        }
        for name, _, dur in line.row.stats.steps
    ]


def _ns(key: str, header: str, get: Callable[[T], int | None], json_key: str) -> Column[T]:
    """A duration that may be missing ("-"; 0 when sorted)."""
    return Column(
        key, header, lambda r: get(r) or 0, lambda r, _: duration(get(r)), json_key, json_value=get
    )


def _arrival(line: RankLine, _: Totals) -> str:
    ns = line.row.arrival_ns
    return f"+{duration(ns)}" if ns is not None else "-"


RANKS: Table[RankLine] = Table(
    "ranks",
    (
        Column("rank", "Rank", lambda r: r.row.rank, lambda r, _: str(r.row.rank), "rank"),
        Column("mark", "Mark", _marks, lambda r, _: _marks(r), None, numeric=False),
        _ns("step", "Step (median)", lambda r: r.row.step_median_ns, "step_median_ns"),
        Column(
            "slowest_step",
            "Slowest step",
            lambda r: r.row.slowest_step[1] if r.row.slowest_step else 0,
            lambda r, _: _slowest(r),
            "slowest_step",
            json_value=lambda r: (
                {"name": r.row.slowest_step[0], "dur_ns": r.row.slowest_step[1]}
                if r.row.slowest_step
                else None
            ),
        ),
        Column(
            "busy",
            v.GPU_BUSY,
            _busy,
            lambda r, _: f"{_busy(r):.1%}" if r.row.stats.window_ns else "-",
            "gpu_busy_fraction",
            json_value=lambda r: round(_busy(r), 6),
        ),
        _ns("compute", "Compute", lambda r: r.row.stats.computation_ns, "computation_ns"),
        _ns("comm", "Comm", lambda r: r.row.stats.communication_ns, "communication_ns"),
        _ns(
            "exposed_comm", "Exposed comm", lambda r: r.row.stats.exposed_comm_ns, "exposed_comm_ns"
        ),
        _ns("idle", "Idle", lambda r: r.row.stats.idle_ns, "idle_ns"),
        _ns("wait", "Coll. wait", lambda r: r.row.wait_ns, "collective_wait_ns"),
        _ns("own_work", "Own work", lambda r: r.row.own_work_ns, "own_work_ns"),
        Column(
            "arrival",
            "Arrival",
            lambda r: r.row.arrival_ns or 0,
            _arrival,
            "median_arrival_ns",
            json_value=lambda r: r.row.arrival_ns,
        ),
        Column(
            "verdict",
            v.VERDICT,
            lambda r: r.row.stats.verdict,
            lambda r, _: r.row.stats.verdict,
            "verdict",
            numeric=False,
        ),
        json_only("path", lambda r: r.row.stats.path),
        json_only("world_size", lambda r: r.row.stats.info.world_size),
        json_only("window_ns", lambda r: r.row.stats.window_ns),
        json_only("gpu_busy_ns", lambda r: r.row.stats.busy_ns),
        json_only("idle_ns_by_cause", lambda r: r.row.stats.idle_by_cause),
        json_only("collective_ns", lambda r: r.row.collective_ns),
        json_only("last_arrivals", lambda r: r.row.last_arrivals),
        json_only("steps", _steps),
    ),
    "rank",
    json_order=(
        "rank",
        "path",
        "world_size",
        "verdict",
        "window_ns",
        "gpu_busy_ns",
        "gpu_busy_fraction",
        "computation_ns",
        "communication_ns",
        "exposed_comm_ns",
        "idle_ns",
        "idle_ns_by_cause",
        "step_median_ns",
        "slowest_step",
        "collective_ns",
        "collective_wait_ns",
        "own_work_ns",
        "median_arrival_ns",
        "last_arrivals",
        "steps",
    ),
)


def _bandwidth(bw: float | None) -> str:
    if bw is None:
        return "-"
    return f"{bw / 1e9:.1f} GB/s" if bw >= 1e9 else f"{bw / 1e6:.1f} MB/s"


COLLECTIVES: Table[Matched] = Table(
    "collectives",
    (
        Column("kind", "Collective", lambda m: m.kind, lambda m, _: m.kind, "kind", numeric=False),
        Column(
            "group", "Group", lambda m: m.group, lambda m, _: m.group or "-", "group", numeric=False
        ),
        Column("index", "#", lambda m: m.index, lambda m, _: str(m.index), "index"),
        Column(
            "ranks",
            "Ranks",
            lambda m: len(m.ranks),
            lambda m, _: str(len(m.ranks)),
            "ranks",
            json_value=lambda m: list(m.ranks),
        ),
        _ns("transfer", "Transfer", lambda m: m.transfer_ns, "transfer_ns"),
        _ns("wait", "Wait (all ranks)", lambda m: m.wait_ns, "wait_ns"),
        json_only(
            "waits_ns", lambda m: {str(r): w for r, w in zip(m.ranks, m.waits_ns, strict=True)}
        ),
        _ns("skew", "Skew", lambda m: m.skew_ns, "skew_ns"),
        Column(
            "last",
            "Last in",
            lambda m: -1 if m.last_rank is None else m.last_rank,
            lambda m, _: f"rank {m.last_rank}" if m.last_rank is not None else "-",
            "last_rank",
            json_value=lambda m: m.last_rank,
        ),
        Column(
            "size",
            "Size",
            lambda m: m.bytes or 0,
            lambda m, _: format_bytes(m.bytes) if m.bytes is not None else "-",
            "bytes",
            json_value=lambda m: m.bytes,
        ),
        Column(
            "bandwidth",
            "Bus bw",
            lambda m: m.bus_bandwidth or 0.0,
            lambda m, _: _bandwidth(m.bus_bandwidth),
            "bus_bandwidth_bytes_per_s",
            json_value=lambda m: m.bus_bandwidth,
        ),
    ),
    "wait",
)


class StepCell(msgspec.Struct, frozen=True):
    """One rank's own work in each step, as the matrix shows it."""

    line: RankLine

    def own(self, j: int) -> int | None:
        return self.line.report.own_work[self.line.index][j]

    def text(self, j: int) -> str:
        value = self.own(j)
        # A space where another cell has its `*`, so that right-aligned units line up.
        slow = "*" if (self.line.index, j) in self.line.report.slow_cells else " "
        return duration(value) + slow if value is not None else "- "


def _step_column(j: int, name: str) -> Column[StepCell]:
    return Column(
        name,
        name,
        lambda c: c.own(j) or 0,
        lambda c, _: c.text(j),
        name,
        json_value=lambda c: c.own(j),
    )


MATRIX: Table[StepCell] = Table(
    "matrix",
    (Column("rank", "Rank", lambda c: c.line.row.rank, lambda c, _: str(c.line.row.rank), "rank"),),
    "rank",
)


def matrix(steps: list[str]) -> Table[StepCell]:
    """The matrix over these steps: the rank, then a column per step (its own work; `*`: slow)."""
    return Table(
        MATRIX.name,
        (*MATRIX.columns, *(_step_column(j, s) for j, s in enumerate(steps))),
        MATRIX.default_sort,
    )
