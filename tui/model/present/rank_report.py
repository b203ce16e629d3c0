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

import orjson

from ..analysis.rank_compare import Matched, RankReport, RankRow
from ..analysis.rank_stats import RankFailed
from ..text import printable
from ..timescale import format_bytes, format_duration

# Steps shown across in the text matrix (the JSON has them all).
MATRIX_STEPS = 10


def _duration(ns: int | None) -> str:
    return format_duration(ns) if ns is not None else "-"


def _marks(report: RankReport, row: RankRow) -> str:
    marks = []
    if row.rank == report.slowest:
        marks.append("slowest")
    if row.rank == report.straggler:
        marks.append("straggler")
    return ", ".join(marks)


RANK_HEADERS = [
    "Rank",
    "Mark",
    "Step (median)",
    "Slowest step",
    "GPU busy",
    "Compute",
    "Comm",
    "Exposed comm",
    "Idle",
    "Coll. wait",
    "Own work",
    "Arrival",
    "Verdict",
]


def rank_cells(report: RankReport, row: RankRow) -> list[str]:
    """One rank's row as text, for the table here and in the viewer."""
    s = row.stats
    slowest = "-"
    if row.slowest_step:
        name, dur = row.slowest_step
        slowest = f"{name.removeprefix('ProfilerStep')} {_duration(dur)}"
    busy = f"{s.busy_ns / s.window_ns:.1%}" if s.window_ns else "-"
    return [
        str(row.rank),
        _marks(report, row) or "-",
        _duration(row.step_median_ns),
        slowest,
        busy,
        _duration(s.computation_ns),
        _duration(s.communication_ns),
        _duration(s.exposed_comm_ns),
        _duration(s.idle_ns),
        _duration(row.wait_ns),
        _duration(row.own_work_ns),
        f"+{_duration(row.arrival_ns)}" if row.arrival_ns is not None else "-",
        s.verdict,
    ]


COLLECTIVE_HEADERS = [
    "Collective",
    "Group",
    "#",
    "Ranks",
    "Transfer",
    "Wait (all ranks)",
    "Skew",
    "Last in",
    "Size",
    "Bus bw",
]


def collective_cells(m: Matched) -> list[str]:
    bw = m.bus_bandwidth
    return [
        m.kind,
        m.group or "-",
        str(m.index),
        str(len(m.ranks)),
        _duration(m.transfer_ns),
        _duration(m.wait_ns),
        _duration(m.skew_ns),
        f"rank {m.last_rank}" if m.last_rank is not None else "-",
        format_bytes(m.bytes) if m.bytes is not None else "-",
        _bandwidth(bw),
    ]


def _bandwidth(bw: float | None) -> str:
    if bw is None:
        return "-"
    return f"{bw / 1e9:.1f} GB/s" if bw >= 1e9 else f"{bw / 1e6:.1f} MB/s"


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
        own = _duration(row.own_work_ns)
        parts.append(f"slowest: rank {report.slowest} (own work {own}: its steps less its waits)")
    return "; ".join(parts) or "no steps or collectives to compare"


def matrix_cells(report: RankReport, limit: int | None = None) -> tuple[list[str], list[list[str]]]:
    """The rank x step matrix as text: each rank's own work per step (`*`: slow)."""
    steps = report.steps[:limit] if limit is not None else report.steps
    rows = []
    for i, row in enumerate(report.rows):
        cells = [str(row.rank)]
        for j in range(len(steps)):
            value = report.own_work[i][j]
            slow = "*" if (i, j) in report.slow_cells else ""
            cells.append(_duration(value) + slow if value is not None else "-")
        rows.append(cells)
    return ["Rank", *steps], rows


def _table(headers: list[str], rows: list[list[str]], markdown: bool) -> list[str]:
    if markdown:
        out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        return out + ["| " + " | ".join(printable(c) for c in r) + " |" for r in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line.rstrip()]
    for r in rows:
        out.append(
            "  ".join(printable(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        )
    return out


def as_text(
    folder: str, report: RankReport, failed: list[RankFailed], top: int, markdown: bool
) -> str:
    title = f"Ranks of {printable(folder)}: {len(report.rows)} ranks"
    out = [f"# {title}" if markdown else title, "", headline(report)]
    out += [f"note: {printable(n)}" for n in report.notes]
    out += [f"failed: rank {f.rank}: {printable(f.error)}" for f in failed]
    out.append("")
    out += _table(RANK_HEADERS, [rank_cells(report, r) for r in report.rows], markdown)
    if report.steps:
        headers, rows = matrix_cells(report, MATRIX_STEPS)
        more = len(report.steps) - MATRIX_STEPS
        out += ["", "Own work per step (step time less collective wait; * stands out):"]
        if more > 0:
            out.append(f"(the first {MATRIX_STEPS} steps; {more} more in --format json)")
        out += _table(headers, rows, markdown)
    if report.collectives:
        shown = top_collectives(report, top)
        out += ["", f"Collectives by wait (top {len(shown)} of {len(report.collectives)}):"]
        out += _table(COLLECTIVE_HEADERS, [collective_cells(m) for m in shown], markdown)
    return "\n".join(out) + "\n"


def as_json(folder: str, report: RankReport, failed: list[RankFailed], top: int) -> bytes:
    ranks = []
    for i, row in enumerate(report.rows):
        s = row.stats
        ranks.append(
            {
                "rank": row.rank,
                "path": s.path,
                "world_size": s.info.world_size,
                "verdict": s.verdict,
                "window_ns": s.window_ns,
                "gpu_busy_ns": s.busy_ns,
                "gpu_busy_fraction": round(s.busy_ns / s.window_ns, 6) if s.window_ns else 0.0,
                "computation_ns": s.computation_ns,
                "communication_ns": s.communication_ns,
                "exposed_comm_ns": s.exposed_comm_ns,
                "idle_ns": s.idle_ns,
                "idle_ns_by_cause": s.idle_by_cause,
                "step_median_ns": row.step_median_ns,
                "slowest_step": (
                    {"name": row.slowest_step[0], "dur_ns": row.slowest_step[1]}
                    if row.slowest_step
                    else None
                ),
                "collective_ns": row.collective_ns,
                "collective_wait_ns": row.wait_ns,
                "own_work_ns": row.own_work_ns,
                "median_arrival_ns": row.arrival_ns,
                "last_arrivals": row.last_arrivals,
                "steps": [
                    {
                        "name": name,
                        "dur_ns": dur,
                        "own_work_ns": report.own_work[i][report.steps.index(name)],
                        "slow": (i, report.steps.index(name)) in report.slow_cells,
                    }
                    for name, _, dur in s.steps
                ],
            }
        )
    doc: dict[str, Any] = {
        "folder": folder,
        "slowest_rank": report.slowest,
        "straggler_rank": report.straggler,
        "notes": report.notes,
        "failed": [{"rank": f.rank, "path": f.path, "error": f.error} for f in failed],
        "ranks": ranks,
        "collectives": [
            {
                "kind": m.kind,
                "group": m.group,
                "index": m.index,
                "ranks": list(m.ranks),
                "transfer_ns": m.transfer_ns,
                "wait_ns": m.wait_ns,
                "waits_ns": {str(r): w for r, w in zip(m.ranks, m.waits_ns, strict=True)},
                "skew_ns": m.skew_ns,
                "last_rank": m.last_rank,
                "bytes": m.bytes,
                "bus_bandwidth_bytes_per_s": m.bus_bandwidth,
            }
            for m in top_collectives(report, top)
        ],
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
