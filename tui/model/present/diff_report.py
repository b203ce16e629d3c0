"""`trace-tui diff BASE NEW`: the headline numbers side by side, then the op, kernel and region
tables by the largest change, as text, Markdown or JSON.

JSON schema (integer nanoseconds; percent over BASE, null where BASE is 0):
  base, new: {path, steps, step_median_ns, window_ns, busy_ns, computation_ns,
              communication_ns, exposed_comm_ns, idle_ns {cause: ns}, verdict}
  matched_share (0..1), notes [str], sort {ops, kernels, regions},
  counts {ops|kernels|regions: {matched, added, removed}},
  ops, kernels, regions: [{name, status (matched|added|removed), base {column: n} | null,
              new {...} | null, delta {column: n}, percent {column: x | null}}]
              (regions also: replaced {gone [kernel], new [kernel]})
"""

from __future__ import annotations

from typing import Any

import orjson

from ..analysis.diff import (
    ADDED,
    HEADLINE,
    KERNEL_COLUMNS,
    MATCHED,
    OP_COLUMNS,
    REGION_COLUMNS,
    REMOVED,
    DiffRow,
    Side,
    TraceDiff,
    ranked,
)
from ..text import printable
from ..timescale import format_duration
from .report import table_lines

# --sort names -> columns, per table.
OP_SORTS = {
    "calls": "calls",
    "self_cpu": "self_cpu_ns",
    "cpu_total": "cpu_total_ns",
    "self_cuda": "self_cuda_ns",
    "cuda_total": "cuda_total_ns",
}
KERNEL_SORTS = {"total": "total_ns", "calls": "calls", "max": "max_ns"}
REGION_SORTS = {"gpu": "gpu_ns", "cpu_total": "cpu_total_ns", "calls": "calls"}
_HEADLINE_LABELS = {
    "step": "Step (median)",
    "window": "Profiled window",
    "busy": "GPU busy",
    "computation": "Computation",
    "communication": "Communication",
    "exposed_comm": "Exposed communication",
}


def sorts_for(d: TraceDiff, sort: str | None) -> dict[str, str]:
    """The column each table is ranked by: `sort` where a table has it, else its default
    (Self CUDA and GPU time when there is GPU work, else Self CPU and CPU time)."""
    gpu = any(r.value(side, "self_cuda_ns") for r in d.ops for side in ("base", "new"))
    chosen = {
        "ops": OP_SORTS.get(sort or "", "self_cuda_ns" if gpu else "self_cpu_ns"),
        "kernels": KERNEL_SORTS.get(sort or "", "total_ns"),
        "regions": REGION_SORTS.get(sort or "", "gpu_ns" if gpu else "cpu_total_ns"),
    }
    return chosen


def as_json(d: TraceDiff, sort: str | None, top: int) -> bytes:
    sorts = sorts_for(d, sort)
    doc: dict[str, Any] = {
        "base": _side_json(d.base),
        "new": _side_json(d.new),
        "matched_share": d.matched_share,
        "notes": d.notes,
        "sort": sorts,
        "counts": {name: _counts(rows) for name, rows in tables(d).items()},
    }
    for name, rows in tables(d).items():
        columns = _COLUMNS[name]
        doc[name] = [_row_json(r, columns, name) for r in _top(ranked(rows, sorts[name]), top)]
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def as_text(d: TraceDiff, sort: str | None, top: int, markdown: bool) -> str:
    sorts = sorts_for(d, sort)
    out: list[str] = []
    for label, side in (("BASE", d.base), ("NEW", d.new)):
        steps = f"{side.steps} step{'s' * (side.steps != 1)}" if side.steps else "no steps"
        text = f"{label}: {printable(side.path)} ({steps}, {side.verdict})"
        out.append(f"- **{text}**" if markdown else text)
    if markdown:
        out.append("")
    out.append(f"{d.matched_share:.0%} of the time is in ops and kernels found in both traces.")
    out += [f"Note: {printable(n)}" for n in d.notes]
    out.append("")
    out += table_lines(["", "BASE", "NEW", "Delta", "Delta %"], _headline_rows(d), markdown)
    for name, title in (("ops", "Ops"), ("kernels", "Kernels"), ("regions", "Regions")):
        rows = tables(d)[name]
        column = sorts[name]
        counts = _counts(rows)
        out.append("")
        shown = _top(ranked(rows, column), top)
        caption = (
            f"{title} by change in {_HEADERS[column]} ({len(shown)} of {len(rows)}: "
            f"{counts[MATCHED]} matched, {counts[ADDED]} added, {counts[REMOVED]} removed)"
        )
        out += [f"#### {caption}", ""] if markdown else [caption]
        if rows:
            headers, cells = table_cells(name, shown, column, full=markdown)
            out += table_lines(headers, cells, markdown)
    return "\n".join(out) + "\n"


def drivers(d: TraceDiff, metric: str, n: int = 3) -> list[str]:
    """The op rows that grew most where `metric` is spent: Self CPU and Self CUDA for the step
    and the window, Self CUDA for the GPU's own numbers."""
    columns = ("self_cpu_ns", "self_cuda_ns") if metric in ("step", "window") else ("self_cuda_ns",)
    found = [(r.delta(c), r.name, c) for c in columns for r in d.ops if r.delta(c) > 0]
    found.sort(key=lambda f: (-f[0], f[1]))
    return [f"{name} ({_signed(delta, c)} {_HEADERS[c]})" for delta, name, c in found[:n]]


def headline_label(metric: str) -> str:
    return _HEADLINE_LABELS[metric]


def column_header(column: str) -> str:
    return _HEADERS[column]


def tables(d: TraceDiff) -> dict[str, list[DiffRow]]:
    """The three tables by name: ops, kernels, regions."""
    return {"ops": d.ops, "kernels": d.kernels, "regions": d.regions}


_COLUMNS = {"ops": OP_COLUMNS, "kernels": KERNEL_COLUMNS, "regions": REGION_COLUMNS}
_HEADERS = {
    "calls": "calls",
    "self_cpu_ns": "Self CPU",
    "cpu_total_ns": "CPU total",
    "self_cuda_ns": "Self CUDA",
    "cuda_total_ns": "CUDA total",
    "total_ns": "GPU time",
    "min_ns": "min",
    "max_ns": "max",
    "gpu_ns": "GPU time",
    "kernels": "kernels",
}


def _top(rows: list[DiffRow], top: int) -> list[DiffRow]:
    return rows[:top] if top else rows


def _counts(rows: list[DiffRow]) -> dict[str, int]:
    counts = dict.fromkeys((MATCHED, ADDED, REMOVED), 0)
    for r in rows:
        counts[r.status] += 1
    return counts


def _side_json(side: Side) -> dict[str, Any]:
    return {
        "path": side.path,
        "steps": side.steps,
        **{attr: getattr(side, attr) for attr in HEADLINE.values()},
        "idle_ns": side.idle_ns,
        "verdict": side.verdict,
    }


def _row_json(r: DiffRow, columns: tuple[str, ...], table: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": r.name,
        "status": r.status,
        "base": r.base,
        "new": r.new,
        "delta": {c: r.delta(c) for c in columns},
        "percent": {c: r.percent(c) for c in columns},
    }
    if table == "regions":
        row["replaced"] = {"gone": r.replaced[0], "new": r.replaced[1]}
    return row


def _amount(value: int | None, column: str) -> str:
    if value is None:
        return "-"
    return str(value) if column in ("calls", "kernels") else format_duration(value)


def _signed(value: int, column: str) -> str:
    return ("+" if value > 0 else "") + _amount(value, column)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


def _headline_rows(d: TraceDiff) -> list[list[str]]:
    rows = []
    for metric in HEADLINE:
        before, after = d.base.metric(metric), d.new.metric(metric)
        if metric == "step" and before is None and after is None:
            continue
        delta = after - before if before is not None and after is not None else None
        pct = 100.0 * delta / before if delta is not None and before else None
        rows.append(
            [
                _HEADLINE_LABELS[metric],
                _amount(before, "ns"),
                _amount(after, "ns"),
                _signed(delta, "ns") if delta is not None else "-",
                _percent(pct),
            ]
        )
    for cause in dict.fromkeys([*d.base.idle_ns, *d.new.idle_ns]):
        before, after = d.base.idle_ns.get(cause, 0), d.new.idle_ns.get(cause, 0)
        pct = 100.0 * (after - before) / before if before else None
        rows.append(
            [
                f"Idle: {cause}",
                _amount(before, "ns"),
                _amount(after, "ns"),
                _signed(after - before, "ns"),
                _percent(pct),
            ]
        )
    rows.append(["Verdict", d.base.verdict, d.new.verdict, "", ""])
    return rows


def table_cells(
    name: str, rows: list[DiffRow], column: str, full: bool = False
) -> tuple[list[str], list[list[str]]]:
    """The ranked column in full (BASE, NEW, delta, delta %) and the others as deltas; with
    `full` (Markdown, where width costs nothing), every column in full."""
    others = [c for c in _COLUMNS[name] if c not in (column, "calls")]
    headers = ["Name", "Status", "Calls", *_full_headers(column, short=True)]
    for c in others:
        headers += _full_headers(c, short=False) if full else [f"Delta {_HEADERS[c]}"]
    if name == "regions":
        headers.append("Kernels only in BASE / NEW")
    cells = []
    for r in rows:
        calls = f"{_amount(r.value('base', 'calls'), 'calls')} -> {r.value('new', 'calls')}"
        row = [printable(r.name), r.status, calls, *_full_cells(r, column)]
        for c in others:
            row += _full_cells(r, c) if full else [_signed(r.delta(c), c)]
        if name == "regions":
            gone, came = r.replaced
            row.append(f"{len(gone)} / {len(came)}" if gone or came else "")
        cells.append(row)
    return headers, cells


def _full_headers(column: str, short: bool) -> list[str]:
    head = _HEADERS[column]
    if short:
        return [f"{head} BASE", "NEW", "Delta", "Delta %"]
    return [f"{head} BASE", f"{head} NEW", f"{head} delta", f"{head} delta %"]


def _full_cells(r: DiffRow, column: str) -> list[str]:
    return [
        _amount(r.value("base", column) if r.base else None, column),
        _amount(r.value("new", column) if r.new else None, column),
        _signed(r.delta(column), column),
        _percent(r.percent(column)),
    ]
