"""`trace-tui summary DIR` on a rank set: the rank table, the rank x step matrix and the
collectives that waited longest, as text, Markdown or JSON.

JSON schema (integer nanoseconds, fractions 0..1):
  folder, slowest_rank, straggler_rank, notes [str], failed [{rank, path, error}],
  ranks: [{rank, path, world_size, verdict, window_ns, gpu_busy_ns, gpu_busy_fraction,
           computation_ns, communication_ns, exposed_comm_ns, idle_ns, idle_ns_by_cause,
           step_median_ns, slowest_step {name, dur_ns}, collective_ns, collective_wait_ns,
           own_work_ns (its steps' time less its collective wait),
           median_arrival_ns (lateness at its collectives after the first rank), last_arrivals,
           steps [{name, dur_ns, own_work_ns (less its collective wait), slow}]}],
  collectives (by total wait, the top N): [{kind, group, index, ranks, transfer_ns,
           wait_ns (summed over ranks), waits_ns {rank: ns}, skew_ns, last_rank, bytes,
           bus_bandwidth_bytes_per_s}]
"""

from __future__ import annotations

from typing import Any

from ..analysis.rank_compare import Matched, RankReport
from ..analysis.rank_stats import RankFailed
from ..text import printable
from .rank_tables import COLLECTIVES, RANKS, StepCell, duration, matrix, rank_lines
from .render import lines
from .render.json import dumps
from .table_spec import Grid, View

# Steps shown across in the text matrix (the JSON has them all).
MATRIX_STEPS = 10


def top_collectives(report: RankReport, top: int) -> list[Matched]:
    return sorted(report.collectives, key=lambda m: m.wait_ns, reverse=True)[:top]


def headline(report: RankReport) -> str:
    """One line: who is slowest and who the others wait for."""
    parts = []
    if report.straggler is not None:
        row = next(r for r in report.rows if r.rank == report.straggler)
        n = len(report.collectives)
        parts.append(
            f"straggler: rank {report.straggler} (last to arrive at {row.last_arrivals} of {n} "
            "collectives; the others wait for it)"
        )
    if report.slowest is not None:
        row = next(r for r in report.rows if r.rank == report.slowest)
        own = duration(row.own_work_ns)
        parts.append(f"slowest: rank {report.slowest} (own work {own}: its steps less its waits)")
    return "; ".join(parts) or "no steps or collectives to compare"


def matrix_view(report: RankReport, limit: int | None = None) -> View[StepCell]:
    """The rank x step matrix: each rank's own work per step (`*`: slow)."""
    steps = report.steps[:limit] if limit is not None else report.steps
    return matrix(steps).view([StepCell(line) for line in rank_lines(report)])


def as_text(
    folder: str, report: RankReport, failed: list[RankFailed], top: int, markdown: bool
) -> str:
    title = f"Ranks of {printable(folder)}: {len(report.rows)} ranks"
    out = [f"# {title}" if markdown else title, "", headline(report)]
    out += [f"note: {printable(n)}" for n in report.notes]
    out += [f"failed: rank {f.rank}: {printable(f.error)}" for f in failed]
    out.append("")
    out += lines(RANKS.view(rank_lines(report)).grid(), markdown, "aligned")
    if report.steps:
        more = len(report.steps) - MATRIX_STEPS
        out += ["", "Own work per step (step time less collective wait; * stands out):"]
        if more > 0:
            out.append(f"(the first {MATRIX_STEPS} steps; {more} more in --format json)")
        out += lines(matrix_view(report, MATRIX_STEPS).grid(), markdown, "aligned")
    if report.collectives:
        shown = top_collectives(report, top)
        out += ["", f"Collectives by wait (top {len(shown)} of {len(report.collectives)}):"]
        out += lines(COLLECTIVES.view(shown).grid(), markdown, "aligned")
    return "\n".join(out) + "\n"


def as_json(folder: str, report: RankReport, failed: list[RankFailed], top: int) -> bytes:
    doc: dict[str, Any] = {
        "folder": folder,
        "slowest_rank": report.slowest,
        "straggler_rank": report.straggler,
        "notes": report.notes,
        "failed": [{"rank": f.rank, "path": f.path, "error": f.error} for f in failed],
        "ranks": RANKS.view(rank_lines(report)).records(),
        "collectives": COLLECTIVES.view(top_collectives(report, top)).records(),
    }
    return dumps(doc)


def as_csv(report: RankReport, top: int) -> list[Grid]:
    """The rank table, the whole matrix (a column per step) and the top collectives."""
    return [
        RANKS.view(rank_lines(report)).grid(),
        matrix_view(report).grid(),
        COLLECTIVES.view(top_collectives(report, top)).grid(),
    ]
