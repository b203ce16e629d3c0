"""`trace-tui diff DIR_A DIR_B` as text, Markdown, JSON and csv: per rank, BASE / NEW / change of
its median step, GPU busy, communication and exposed communication; the ranks whose step grew
most, and the straggler on each side.

JSON words as the trace diff's: `delta` is NEW - BASE in ns, `percent` is that over BASE in
percent (null where a side has none, or BASE is 0)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.rank_compare import RankReport, RankRow
from ..analysis.rank_diff import RankChange, RankSetDiff
from ..analysis.rank_stats import RankFailed
from ..text import printable
from . import vocabulary as v
from .diff_tables import percent
from .rank_tables import duration
from .render import lines
from .render.json import dumps
from .table_spec import Column, Grid, Table


def _busy(row: RankRow) -> float | None:
    s = row.stats
    return s.busy_ns / s.window_ns if s.window_ns else None


def _hundred(fraction: float | None) -> float | None:
    return None if fraction is None else fraction * 100


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _sides(
    key: str, header: str, get: Callable[[RankRow], int | None], json_key: str
) -> list[Column[RankChange]]:
    """BASE, NEW and the change of a duration."""

    def change(r: RankChange) -> int | None:
        a, b = get(r.base), get(r.new)
        return None if a is None or b is None else b - a

    def signed(r: RankChange) -> str:
        delta = change(r)
        return "-" if delta is None else ("+" if delta > 0 else "") + duration(delta)

    return [
        Column(
            f"{key}_base",
            f"{header} BASE",
            lambda r: get(r.base) or 0,
            lambda r, _: duration(get(r.base)),
            f"{json_key}.base",
            json_value=lambda r: get(r.base),
        ),
        Column(
            f"{key}_new",
            f"{header} NEW",
            lambda r: get(r.new) or 0,
            lambda r, _: duration(get(r.new)),
            f"{json_key}.new",
            json_value=lambda r: get(r.new),
        ),
        Column(
            f"{key}_change",
            f"{header} change",
            lambda r: change(r) or 0,
            lambda r, _: signed(r),
            f"{json_key}.delta",
            json_value=change,
        ),
    ]


RANK_CHANGES: Table[RankChange] = Table(
    "rank_changes",
    (
        Column("rank", "Rank", lambda r: r.rank, lambda r, _: str(r.rank), "rank"),
        *_sides("step", "Step", lambda r: r.step_median_ns, "step_median_ns"),
        Column(
            "step_pct",
            "Step %",
            lambda r: r.step_change or 0.0,
            lambda r, _: percent(_hundred(r.step_change)),
            "step_median_ns.percent",
            json_value=lambda r: _hundred(r.step_change),
        ),
        Column(
            "busy_base",
            f"{v.GPU_BUSY} BASE",
            lambda r: _busy(r.base) or 0.0,
            lambda r, _: _pct(_busy(r.base)),
            "gpu_busy_fraction.base",
            json_value=lambda r: _busy(r.base),
        ),
        Column(
            "busy_new",
            f"{v.GPU_BUSY} NEW",
            lambda r: _busy(r.new) or 0.0,
            lambda r, _: _pct(_busy(r.new)),
            "gpu_busy_fraction.new",
            json_value=lambda r: _busy(r.new),
        ),
        *_sides("comm", "Comm", lambda r: r.stats.communication_ns, "communication_ns"),
        *_sides("exposed", "Exposed", lambda r: r.stats.exposed_comm_ns, "exposed_comm_ns"),
    ),
    "step_pct",
)


def _straggler(report: RankReport) -> str:
    return "-" if report.straggler is None else f"rank {report.straggler}"


def headline(result: RankSetDiff) -> list[str]:
    """The lines above the table: the job's pace, who regressed most, the stragglers."""
    before = result.slowest_step_ns(result.base)
    after = result.slowest_step_ns(result.new)
    change = result.slowest_change()
    pace = f"slowest rank's median step: {duration(before)} -> {duration(after)}"
    if change is not None:
        pace += f" ({change * 100:+.1f}%)"
    most = result.regressed_most()[:5]
    grew = ", ".join(f"rank {r.rank} {percent((r.step_change or 0.0) * 100)}" for r in most)
    return [
        pace,
        f"regressed most: {grew or 'no rank’s median step grew'}",
        f"straggler: {_straggler(result.base)} -> {_straggler(result.new)}",
    ]


def _ordered(result: RankSetDiff, top: int) -> list[RankChange]:
    """The ranks that regressed most first, then the others by rank; `top` of them (0: all)."""
    most = result.regressed_most()
    rest = [r for r in result.rows if r not in most]
    rows = most + rest
    return rows[:top] if top else rows


def _failed(failed: list[tuple[str, RankFailed]]) -> list[str]:
    return [f"failed: {side} rank {f.rank}: {printable(f.error)}" for side, f in failed]


def as_text(
    folders: tuple[str, str],
    result: RankSetDiff,
    failed: list[tuple[str, RankFailed]],
    top: int,
    markdown: bool,
) -> str:
    base, new = (printable(f) for f in folders)
    title = f"Rank sets: {base} ({len(result.base.rows)} ranks) -> {new} ({len(result.new.rows)})"
    out = [f"# {title}" if markdown else title, ""]
    out += headline(result)
    out += [f"note: {printable(n)}" for n in result.notes] + _failed(failed)
    out.append("")
    if not result.rows:
        out.append("No rank is in both sets.")
    else:
        out += lines(RANK_CHANGES.view(_ordered(result, top)).grid(), markdown, "aligned")
    return "\n".join(out) + "\n"


def as_json(
    folders: tuple[str, str],
    result: RankSetDiff,
    failed: list[tuple[str, RankFailed]],
    top: int,
) -> bytes:
    before, after = result.slowest_step_ns(result.base), result.slowest_step_ns(result.new)
    doc: dict[str, Any] = {
        "base": folders[0],
        "new": folders[1],
        "ranks_in": {"base": len(result.base.rows), "new": len(result.new.rows)},
        "only_base": result.only_base,
        "only_new": result.only_new,
        "slowest_step_ns": {
            "base": before,
            "new": after,
            "delta": None if before is None or after is None else after - before,
            "percent": _hundred(result.slowest_change()),
        },
        "regressed_most": [r.rank for r in result.regressed_most()],
        "straggler_rank": {"base": result.base.straggler, "new": result.new.straggler},
        "notes": result.notes,
        "failed": [
            {"side": side, "rank": f.rank, "path": f.path, "error": f.error} for side, f in failed
        ],
        "ranks": RANK_CHANGES.view(_ordered(result, top)).records(),
    }
    return dumps(doc)


def as_csv(result: RankSetDiff, top: int) -> list[Grid]:
    return [RANK_CHANGES.view(_ordered(result, top)).grid()]
