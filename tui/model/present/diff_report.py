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

from ..analysis.diff import ADDED, HEADLINE, MATCHED, REMOVED, DiffRow, Side, TraceDiff, ranked
from ..text import printable
from .diff_tables import DIFF_TABLES, HEADLINES, SORTS, Headline, header, shown, signed
from .render import lines
from .render.json import dumps
from .table_spec import Grid, View

# --sort names -> columns, per table.
OP_SORTS, KERNEL_SORTS, REGION_SORTS = SORTS["ops"], SORTS["kernels"], SORTS["regions"]
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
        doc[name] = DIFF_TABLES[name].view(_top(ranked(rows, sorts[name]), top)).records()
    return dumps(doc)


def as_csv(d: TraceDiff, sort: str | None, top: int) -> list[Grid]:
    """The headline numbers, then the three tables as `as_text` ranks them (named ops,
    kernels, regions)."""
    sorts = sorts_for(d, sort)
    return [
        HEADLINES.view(headlines(d)).grid(),
        *(
            DIFF_TABLES[name].view(_top(ranked(rows, sorts[name]), top)).grid(name)
            for name, rows in tables(d).items()
        ),
    ]


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
    out += lines(HEADLINES.view(headlines(d)).grid(), markdown)
    for name, title in (("ops", "Ops"), ("kernels", "Kernels"), ("regions", "Regions")):
        rows = tables(d)[name]
        column = sorts[name]
        counts = _counts(rows)
        out.append("")
        ranked_rows = _top(ranked(rows, column), top)
        caption = (
            f"{title} by change in {header(column)} ({len(ranked_rows)} of {len(rows)}: "
            f"{counts[MATCHED]} matched, {counts[ADDED]} added, {counts[REMOVED]} removed)"
        )
        out += [f"#### {caption}", ""] if markdown else [caption]
        if rows:
            out += lines(view(name, ranked_rows, column, full=markdown).grid(), markdown)
    return "\n".join(out) + "\n"


def drivers(d: TraceDiff, metric: str, n: int = 3) -> list[str]:
    """The op rows that grew most where `metric` is spent: Self CPU and Self CUDA for the step
    and the window, Self CUDA for the GPU's own numbers. Python frames are left out, as the op
    table leaves them out: the ops they wrap are named instead."""
    columns = ("self_cpu_ns", "self_cuda_ns") if metric in ("step", "window") else ("self_cuda_ns",)
    ops = [r for r in d.ops if not r.python]
    found = [(r.delta(c), r.name, c) for c in columns for r in ops if r.delta(c) > 0]
    found.sort(key=lambda f: (-f[0], f[1]))
    return [f"{name} ({signed(delta, c)} {header(c)})" for delta, name, c in found[:n]]


def headline_label(metric: str) -> str:
    return _HEADLINE_LABELS[metric]


def column_header(column: str) -> str:
    return header(column)


def tables(d: TraceDiff) -> dict[str, list[DiffRow]]:
    """The three tables by name: ops, kernels, regions."""
    return {"ops": d.ops, "kernels": d.kernels, "regions": d.regions}


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


def headlines(d: TraceDiff) -> list[Headline]:
    """The headline numbers (the step's only where a trace has steps), idle time by cause,
    and the verdicts."""
    rows = []
    for metric in HEADLINE:
        before, after = d.base.metric(metric), d.new.metric(metric)
        if metric == "step" and before is None and after is None:
            continue
        rows.append(Headline(_HEADLINE_LABELS[metric], before, after))
    for cause in dict.fromkeys([*d.base.idle_ns, *d.new.idle_ns]):
        before, after = d.base.idle_ns.get(cause, 0), d.new.idle_ns.get(cause, 0)
        rows.append(Headline(f"Idle: {cause}", before, after))
    rows.append(Headline("Verdict", None, None, (d.base.verdict, d.new.verdict)))
    return rows


def view(name: str, rows: list[DiffRow], column: str, full: bool = False) -> View[DiffRow]:
    """The ranked column in full (BASE, NEW, delta, delta %) and the others as deltas; with
    `full` (Markdown, where width costs nothing), every column in full."""
    return DIFF_TABLES[name].view(rows, columns=shown(name, column, full))
