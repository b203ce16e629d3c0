"""`trace-tui summary`: the summary, the verdict and the top table rows as text, Markdown or JSON.

JSON schema (times are integer nanoseconds, shares are fractions 0..1):
  path, window_ns [t0, t1] (from the trace start),
  summary: self_cpu_total_ns, self_cuda_total_ns, gpu_busy_fraction, gpu_busy_ns, wall_ns,
           idle_ns_by_cause {host wait, kernel wait, other} (summed over streams),
           kernel_launches, launch_cpu_ns, launched_gpu_ns, short_work_fraction,
           median_launch_delay_ns (null without launches), sync_calls, sync_ns,
  memory: peaks [{device, allocated_bytes, reserved_bytes, ts_ns, step, op}],
          top_self_allocations [{name, bytes}],
  verdict: {label, reason},
  steps: [{name, start_ns, dur_ns, gpu_busy_fraction, verdict}],
  table: "ops" or "kernels", sort, rows: [...] (ops: name, calls, self_cpu_ns, cpu_total_ns,
         cpu_avg_ns, self_cuda_ns, cuda_total_ns, cuda_avg_ns, self_cpu_mem_bytes,
         cpu_mem_bytes, self_cuda_mem_bytes, cuda_mem_bytes; kernels: name, calls, total_ns,
         avg_ns, min_ns, max_ns, share, geometry {grid, block, registers, shared mem,
         occupancy %})
"""

from __future__ import annotations

from typing import Any

import orjson

from .kernels import KernelStat
from .stats import OpStat
from .text import printable, shown
from .timescale import format_bytes, format_duration
from .verdict import Summary

OP_SORTS = (
    "cpu_total",
    "self_cpu",
    "cpu_avg",
    "self_cuda",
    "cuda_total",
    "cuda_avg",
    "calls",
    "name",
)
KERNEL_SORTS = ("total", "avg", "min", "max", "calls", "name")


def sort_ops(rows: list[OpStat], key: str) -> list[OpStat]:
    field = {
        "cpu_avg": "cpu_avg_ns",
        "cuda_avg": "cuda_avg_ns",
        "calls": "calls",
        "name": "name",
    }.get(key, f"{key}_ns")
    return sorted(rows, key=lambda r: getattr(r, field), reverse=key != "name")


def sort_kernels(rows: list[KernelStat], key: str) -> list[KernelStat]:
    field = {"calls": "calls", "name": "name", "avg": "avg_ns"}.get(key, f"{key}_ns")
    return sorted(rows, key=lambda r: getattr(r, field), reverse=key != "name")


def as_json(
    path: str, summary: Summary, table: str, sort: str, rows: list[OpStat] | list[KernelStat]
) -> bytes:
    e = summary.verdict.evidence
    doc: dict[str, Any] = {
        "path": path,
        "window_ns": list(summary.window),
        "summary": {
            "self_cpu_total_ns": summary.self_cpu_ns,
            "self_cuda_total_ns": summary.self_cuda_ns,
            "gpu_busy_fraction": round(e.gpu_busy, 6),
            "gpu_busy_ns": e.gpu_busy_ns,
            "wall_ns": e.wall_ns,
            "idle_ns_by_cause": summary.idle_ns,
            "kernel_launches": e.launches,
            "launch_cpu_ns": e.launch_cpu_ns,
            "launched_gpu_ns": e.launched_gpu_ns,
            "short_work_fraction": round(e.short_work_share, 6),
            "median_launch_delay_ns": summary.median_launch_delay_ns,
            "sync_calls": summary.sync_calls,
            "sync_ns": summary.sync_ns,
        },
        "memory": {
            "peaks": [
                {
                    "device": p.device,
                    "allocated_bytes": p.allocated,
                    "reserved_bytes": p.reserved,
                    "ts_ns": p.ts,
                    "step": p.step,
                    "op": p.op,
                }
                for p in summary.memory_peaks
            ],
            "top_self_allocations": [{"name": n, "bytes": b} for n, b in summary.top_memory_ops],
        },
        "verdict": {"label": summary.verdict.label, "reason": summary.verdict.reason},
        "steps": [
            {
                "name": s.name,
                "start_ns": s.start_ns,
                "dur_ns": s.dur_ns,
                "gpu_busy_fraction": round(s.verdict.evidence.gpu_busy, 6),
                "verdict": s.verdict.label,
            }
            for s in summary.steps
        ],
        "table": table,
        "sort": sort,
        "rows": [_row_json(r) for r in rows],
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def _row_json(row: OpStat | KernelStat) -> dict[str, Any]:
    if isinstance(row, OpStat):
        return {
            "name": row.name,
            "calls": row.calls,
            "self_cpu_ns": row.self_cpu_ns,
            "cpu_total_ns": row.cpu_total_ns,
            "cpu_avg_ns": round(row.cpu_avg_ns),
            "self_cuda_ns": row.self_cuda_ns,
            "cuda_total_ns": row.cuda_total_ns,
            "cuda_avg_ns": round(row.cuda_avg_ns),
            "self_cpu_mem_bytes": row.self_cpu_mem,
            "cpu_mem_bytes": row.cpu_mem,
            "self_cuda_mem_bytes": row.self_cuda_mem,
            "cuda_mem_bytes": row.cuda_mem,
        }
    return {
        "name": row.name,
        "calls": row.calls,
        "total_ns": row.total_ns,
        "avg_ns": round(row.avg_ns),
        "min_ns": row.min_ns,
        "max_ns": row.max_ns,
        "share": round(row.share, 6),
        "geometry": row.geometry,
    }


def summary_lines(summary: Summary) -> list[tuple[str, str]]:
    """(label, value) pairs of the summary strip."""
    e = summary.verdict.evidence
    idle = ", ".join(f"{cause} {format_duration(ns)}" for cause, ns in summary.idle_ns.items())
    delay = summary.median_launch_delay_ns
    lines = [
        ("Verdict", summary.verdict.label),
        ("Why", summary.verdict.reason),
        ("Self CPU time total", format_duration(summary.self_cpu_ns)),
        ("Self CUDA time total", format_duration(summary.self_cuda_ns)),
        ("GPU busy", f"{e.gpu_busy:.1%} of {format_duration(e.wall_ns)}"),
        ("GPU idle (all streams)", idle),
        ("Kernel launches", f"{e.launches:,}"),
        ("Median launch-to-start", format_duration(delay) if delay is not None else "-"),
        ("CPU sync calls", f"{summary.sync_calls:,}, waiting {format_duration(summary.sync_ns)}"),
    ]
    for peak in summary.memory_peaks:
        where = " ".join(
            part
            for part in (
                f"in {peak.step}" if peak.step else "",
                f"during {peak.op}" if peak.op else "",
            )
            if part
        )
        lines.append(
            (
                f"Peak memory {peak.device}",
                f"{format_bytes(peak.allocated)} allocated, {format_bytes(peak.reserved)} "
                f"reserved, at +{format_duration(peak.ts)} {where}".rstrip(),
            )
        )
    if summary.top_memory_ops:
        lines.append(
            (
                "Top self allocations",
                "; ".join(f"{name} {format_bytes(size)}" for name, size in summary.top_memory_ops),
            )
        )
    return lines


def op_cells(row: OpStat, cpu_total: int, cuda_total: int) -> list[str]:
    """The torch table's columns for one op."""
    return [
        row.name,
        _pct(row.self_cpu_ns, cpu_total),
        format_duration(row.self_cpu_ns),
        _pct(row.cpu_total_ns, cpu_total),
        format_duration(row.cpu_total_ns),
        format_duration(row.cpu_avg_ns),
        format_duration(row.self_cuda_ns),
        _pct(row.self_cuda_ns, cuda_total),
        format_duration(row.cuda_total_ns),
        format_duration(row.cuda_avg_ns),
        f"{row.calls:,}",
    ]


OP_HEADERS = [
    "Name",
    "Self CPU %",
    "Self CPU",
    "CPU total %",
    "CPU total",
    "CPU avg",
    "Self CUDA",
    "Self CUDA %",
    "CUDA total",
    "CUDA avg",
    "# Calls",
]
KERNEL_HEADERS = [
    "Name",
    "Calls",
    "Total",
    "Avg",
    "Min",
    "Max",
    "GPU %",
    "Grid",
    "Block",
    "Registers",
    "Shared mem",
    "Occupancy %",
]


def kernel_cells(row: KernelStat) -> list[str]:
    g = row.geometry
    return [
        row.name,
        f"{row.calls:,}",
        format_duration(row.total_ns),
        format_duration(row.avg_ns),
        format_duration(row.min_ns),
        format_duration(row.max_ns),
        f"{row.share:.1%}",
        g.get("grid", ""),
        g.get("block", ""),
        g.get("registers", ""),
        g.get("shared mem", ""),
        g.get("occupancy %", ""),
    ]


def _pct(part: float, whole: float) -> str:
    return f"{part / whole:.2%}" if whole else "-"


def as_text(
    path: str, summary: Summary, headers: list[str], cells: list[list[str]], markdown: bool
) -> str:
    """Plain text (no escape codes) or Markdown ready to paste into an issue."""
    out: list[str] = []
    pairs = summary_lines(summary)
    if markdown:
        out.append(f"### trace-tui summary: `{printable(path)}`\n")
        out += [f"- **{label}**: {printable(value)}" for label, value in pairs]
    else:
        out.append(printable(path))
        width = max(len(label) for label, _ in pairs)
        out += [f"{label:<{width}}  {printable(value)}" for label, value in pairs]
    if summary.steps:
        out.append("")
        step_rows = [
            [
                s.name,
                format_duration(s.dur_ns),
                f"{s.verdict.evidence.gpu_busy:.1%}",
                s.verdict.label,
            ]
            for s in summary.steps
        ]
        out += _table(["Step", "Duration", "GPU busy", "Verdict"], step_rows, markdown)
    out.append("")
    out += _table(headers, cells, markdown)
    return "\n".join(out) + "\n"


def _table(headers: list[str], rows: list[list[str]], markdown: bool) -> list[str]:
    rows = [[shown(c, 500) for c in row] for row in rows]
    if markdown:

        def line(cells: list[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

        return [line(headers), "|" + "---|" * len(headers), *(line(r) for r in rows)]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    widths[0] = min(widths[0], 60)

    def fit(text: str, i: int) -> str:
        if i == 0:
            return (text if len(text) <= widths[0] else text[: widths[0] - 1] + "…").ljust(
                widths[0]
            )
        return text.rjust(widths[i])

    rule = "  ".join("-" * w for w in widths)
    return [
        rule,
        "  ".join(fit(h, i) for i, h in enumerate(headers)),
        rule,
        *("  ".join(fit(c, i) for i, c in enumerate(r)) for r in rows),
        rule,
    ]
