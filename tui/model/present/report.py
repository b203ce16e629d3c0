"""`trace-tui summary`: the summary, the verdict and the top table rows as text, Markdown or JSON.

JSON schema (times are integer nanoseconds, shares are fractions 0..1):
  path, window_ns [t0, t1] (from the trace start; the summary's window: without steps the GPU's
  first to last work), cpu_only_ns {before, after} (a trace without steps: the time outside it),
  clock_offset_ns (GPU work starts at least this long after its launch even on an idle GPU: the
  clocks disagree, and the window is the GPU's span; null when they agree),
  summary: self_cpu_total_ns, self_cuda_total_ns (the table's totals, as key_averages() prints),
           gpu_busy_fraction, gpu_busy_ns, wall_ns, computation_ns, communication_ns,
           exposed_comm_ns, comm_overlap_ns, memcpy_ns, exposed_memcpy_ns (TraceLens's
           gpu_timeline terms),
           idle_ns_by_cause {host wait, kernel wait, other} (no work on any of a device's
           streams), stream_idle_ns_by_cause (the same summed over the streams),
           kernel_launches, launch_cpu_ns, launched_gpu_ns, short_work_fraction,
           median_launch_delay_ns (null without launches), sync_calls, sync_ns,
  memory: peaks [{device, allocated_bytes, reserved_bytes, ts_ns, step, op}],
          top_self_allocations [{name, bytes (summed over its calls), calls}],
  verdict: {label, reason, truncated (the file ended early: it judges what was read)},
  graphs: [{label, replays, kernels (per replay), gpu_ns, share (of all GPU work that ran in
          the window)}]: CUDA/HIP graph replays (analysis/graphs.py), most GPU time first,
  compiled: null | {kernels, gpu_ns, share (of the GPU work launched in the window), regions:
          [{name, calls, kernels, gpu_ns}]}: torch.compile's regions (analysis/compiled.py),
  steps: [{name, start_ns, dur_ns (its CPU span), gpu_ns (GPU work it launched), gpu_wall_ns
          (from its start to the end of its CPU span or of its last GPU work), gpu_busy_fraction
          (its own work over gpu_wall_ns), verdict}],
  next_steps: [{rule (data-loading | syncs | host-copies | communication | launch-overhead |
          tensor-cores | fusion | memory-headroom | fragmentation), title, change, evidence,
          bound_ns (the most it could save over the window; 0 for memory advice),
          bound_per_step_ns (null without steps), evidence_slice: null | {row, name, lane,
          start_ns} (the slice that shows it)}]: analysis/advice.py, largest bound first,
  table: "ops" or "kernels", sort, rows: [...] with the JSON keys of op_table.py, kernel_table.py
         (ops: name, self_cpu_ns, cpu_total_ns, cpu_avg_ns, self_cuda_ns, cuda_total_ns,
         cuda_avg_ns, cpu_mem_bytes, self_cpu_mem_bytes, cuda_mem_bytes, self_cuda_mem_bytes,
         calls; kernels: name, total_ns, avg_ns, min_ns, max_ns, calls, share,
         geometry {grid, block, registers, shared mem, occupancy %}, graphs [the CUDA graphs
         its instances were replayed in]; `--by-shape` ops add
         input_shapes, cpu_min_ns, cpu_max_ns, cuda_min_ns, cuda_max_ns; both: flops, tflops,
         percent_of_roof, above_roof (true: the calls ran faster than their roofs allow, so
         percent_of_roof is null), bound ("compute" | "memory") of the modelled calls (null
         where the row has none, or the trace no shapes), see analysis/op_work.py)
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..analysis.advice import bound_text
from ..analysis.compiled import Compiled
from ..analysis.summary import StepRow, Summary
from ..text import counted, printable
from ..timescale import format_bytes, format_duration
from .render import lines
from .render.json import dumps
from .step_table import STEPS
from .table_spec import Grid, Totals
from .tables import AnyScopeReport


def as_json(
    path: str, report: AnyScopeReport, top: int, roofline: dict[str, Any] | None = None
) -> bytes:
    """`roofline`: the by-kind closeness to the roof and MFU, where shapes were recorded;
    `top`: the table's first rows (0: all)."""
    summary, totals = report.summary, report.totals
    e = summary.verdict.evidence
    doc: dict[str, Any] = {
        "path": path,
        "window_ns": list(summary.window),
        "cpu_only_ns": {"before": summary.cpu_only_ns[0], "after": summary.cpu_only_ns[1]},
        "clock_offset_ns": summary.clock_offset_ns,
        "summary": {
            "self_cpu_total_ns": totals.self_cpu_ns,
            "self_cuda_total_ns": totals.self_cuda_ns,
            "gpu_busy_fraction": round(e.gpu_busy, 6),
            "gpu_busy_ns": e.gpu_busy_ns,
            "wall_ns": e.wall_ns,
            "computation_ns": summary.gpu_time.computation_ns,
            "communication_ns": summary.gpu_time.communication_ns,
            "exposed_comm_ns": summary.gpu_time.exposed_comm_ns,
            "comm_overlap_ns": summary.gpu_time.overlap_ns,
            "memcpy_ns": summary.gpu_time.memcpy_ns,
            "exposed_memcpy_ns": summary.gpu_time.exposed_memcpy_ns,
            "idle_ns_by_cause": summary.idle_ns,
            "stream_idle_ns_by_cause": summary.stream_idle_ns,
            "kernel_launches": e.launches,
            "launch_cpu_ns": e.launch_cpu_ns,
            "launched_gpu_ns": e.launched_gpu_ns,
            "short_work_fraction": round(e.short_work_share, 6),
            "median_launch_delay_ns": summary.median_launch_delay_ns,
            "sync_calls": summary.sync_calls,
            "sync_ns": summary.sync_ns,
        },
        **({"roofline": roofline} if roofline is not None else {}),
        "graphs": [
            {
                "label": g.label,
                "replays": g.replays,
                "kernels": g.kernels,
                "gpu_ns": g.gpu_ns,
                "share": round(g.share, 6),
            }
            for g in summary.graphs
        ],
        "compiled": None
        if summary.compiled is None
        else {
            "kernels": summary.compiled.kernels,
            "gpu_ns": summary.compiled.gpu_ns,
            "share": round(summary.compiled.share, 6),
            "regions": [msgspec.to_builtins(r) for r in summary.compiled.regions],
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
            "top_self_allocations": [
                {"name": n, "bytes": b, "calls": c} for n, b, c in summary.top_memory_ops
            ],
        },
        "verdict": {
            "label": summary.verdict.label,
            "reason": summary.verdict.reason,
            "truncated": summary.truncated,
        },
        "steps": STEPS.view(summary.steps).records(),
        "next_steps": [
            {
                "rule": r.rule,
                "title": r.title,
                "change": r.change,
                "evidence": r.evidence,
                "bound_ns": r.bound_ns,
                "bound_per_step_ns": r.per_step_ns,
                "evidence_slice": None if r.target is None else msgspec.to_builtins(r.target),
            }
            for r in report.advice
        ],
        "table": report.table.name,
        "sort": report.sort,
        "python_frames_hidden": report.frames_hidden,
        "rows": report.view(top).records(),
    }
    return dumps(doc)


def as_csv(report: AnyScopeReport, top: int) -> list[Grid]:
    """The tables `as_text` prints: the steps (where the trace has them), then the table."""
    steps = [STEPS.view(report.summary.steps).grid()] if report.summary.steps else []
    return [*steps, report.view(top).grid()]


def _window(summary: Summary) -> str:
    (t0, t1), (g0, g1) = summary.window, summary.verdict.window
    text = f"+{format_duration(t0)} to +{format_duration(t1)}"
    if (g0, g1) != (t0, t1):  # one step: its GPU numbers are over its own work's span
        text += f"; the step's GPU work: +{format_duration(g0)} to +{format_duration(g1)}"
    before, after = summary.cpu_only_ns
    if summary.clock_offset_ns is not None:
        text += (
            " (the CPU and GPU clocks disagree, GPU work starting at least "
            f"{format_duration(summary.clock_offset_ns)} after its launch even on an idle GPU: "
            "the GPU's first to last work)"
        )
    elif before or after:
        text += (
            f" (no steps: the GPU's first to last work; CPU only {format_duration(before)} "
            f"before it, {format_duration(after)} after)"
        )
    return text


# After the verdict of a file that ended early (a profiler killed mid-write).
TRUNCATED = " (the trace is truncated: this judges what was read)"


def summary_lines(summary: Summary, totals: Totals) -> list[tuple[str, str]]:
    """(label, value) pairs of the summary strip."""
    e, g = summary.verdict.evidence, summary.gpu_time

    def by_cause(idle: dict[str, int]) -> str:
        causes = ", ".join(f"{cause} {format_duration(ns)}" for cause, ns in idle.items())
        return f"{format_duration(sum(idle.values()))} ({causes})"

    delay = summary.median_launch_delay_ns
    lines = [
        ("Verdict", summary.verdict.label + (TRUNCATED if summary.truncated else "")),
        ("Why", summary.verdict.reason),
        # The table (and its totals) covers the scope; the GPU numbers below cover this window.
        ("Window", _window(summary)),
        ("Self CPU time total", format_duration(totals.self_cpu_ns)),
        ("Self CUDA time total", format_duration(totals.self_cuda_ns)),
        ("GPU busy", f"{e.gpu_busy:.1%} of {format_duration(e.wall_ns)}"),
        (
            "GPU time",
            f"compute {format_duration(g.computation_ns)}, communication "
            f"{format_duration(g.communication_ns)} ({format_duration(g.exposed_comm_ns)} "
            f"exposed), memcpy {format_duration(g.memcpy_ns)} "
            f"({format_duration(g.exposed_memcpy_ns)} exposed)",
        ),
        ("GPU idle", by_cause(summary.idle_ns)),
        ("Stream idle (summed)", by_cause(summary.stream_idle_ns)),
        ("Kernel launches", f"{e.launches:,}"),
        ("Median launch-to-start", format_duration(delay) if delay is not None else "-"),
        ("CPU sync calls", f"{summary.sync_calls:,}, waiting {format_duration(summary.sync_ns)}"),
    ]
    # How the GPU time splits, right after the line that gives it.
    after = next(i for i, (label, _) in enumerate(lines) if label == "GPU time") + 1
    if summary.graphs:
        lines.insert(after, ("CUDA graphs", _graphs_line(summary)))
    if summary.compiled is not None:
        lines.insert(after, ("torch.compile", _compiled_line(summary.compiled)))
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
                "; ".join(
                    f"{name} {format_bytes(size)}"
                    + (f" (summed over {calls:,} calls)" if calls > 1 else "")
                    for name, size, calls in summary.top_memory_ops
                ),
            )
        )
    return lines


NAMED = 3  # graphs or compiled regions named on the summary's line


def _compiled_line(found: Compiled) -> str:
    """How much of the GPU work compiled regions launched, and the heaviest regions."""
    parts = [
        f"{printable(r.name)} {counted(r.calls, 'call')}, {counted(r.kernels, 'kernel')}, "
        f"{format_duration(r.gpu_ns)}"
        for r in found.regions[:NAMED]
    ]
    more = len(found.regions) - NAMED
    head = (
        f"{found.share:.0%} of the GPU work ({counted(found.kernels, 'kernel')}, "
        f"{format_duration(found.gpu_ns)}) launched in compiled regions"
    )
    return f"{head}: " + "; ".join(parts) + (f"; {more} more" if more > 0 else "")


def _graphs_line(summary: Summary) -> str:
    """How much of the GPU work ran in graph replays, and the heaviest graphs."""
    share = sum(g.share for g in summary.graphs)
    replays = sum(g.replays for g in summary.graphs)
    head = f"{share:.0%} of all GPU work ran in {counted(replays, 'replay')}"
    parts = [
        f"{g.label} {counted(g.replays, 'replay')} of {counted(g.kernels, 'kernel')}, "
        f"{format_duration(g.gpu_ns)} ({g.share:.0%})"
        for g in summary.graphs[:NAMED]
    ]
    more = len(summary.graphs) - NAMED
    return f"{head}: " + "; ".join(parts) + (f"; {more} more graphs" if more > 0 else "")


def as_text(
    path: str,
    report: AnyScopeReport,
    top: int,
    markdown: bool,
    scope: str | None = None,
    roofline: str | None = None,
    verdict_note: str | None = None,
) -> str:
    """Plain text (no escape codes) or Markdown ready to paste into an issue; `scope` names
    what the report covers when it is not the whole trace (`ProfilerStep#7`); `roofline` is
    the line on how close to the hardware it ran, shown after the verdict, and `verdict_note`
    what the verdict adds to its label from it."""
    summary = report.summary
    out: list[str] = []
    pairs = summary_lines(summary, report.totals)
    if verdict_note is not None:
        pairs[0] = (pairs[0][0], f"{pairs[0][1]}: {verdict_note}")
    if roofline is not None:
        pairs.insert(2, ("Roofline", roofline))
    of = f" ({printable(scope)})" if scope else ""
    if markdown:
        out.append(f"### trace-tui summary: `{printable(path)}`{of}\n")
        out += [f"- **{label}**: {printable(value)}" for label, value in pairs]
    else:
        out.append(printable(path) + of)
        width = max(len(label) for label, _ in pairs)
        out += [f"{label:<{width}}  {printable(value)}" for label, value in pairs]
    advice = report.advice
    if advice:
        out += ["", "### Next steps" if markdown else "Next steps (largest possible saving first)"]
        for n, r in enumerate(advice, 1):
            title, body = f"{r.title}: {bound_text(r)}", f"{r.evidence}; try: {r.change}"
            if markdown:  # an ordered list, the evidence each item's second paragraph (without
                # the blank lines Markdown runs every item into one paragraph)
                mark = f"{n}. "
                item = [f"{mark}**{title}**", "", " " * len(mark) + body]
                out += [printable(line) for line in ([""] if n > 1 else []) + item]
            else:
                out += [printable(f"{n}. {title}"), printable(f"   {body}")]
    if summary.steps:
        shown, heading = strip_steps(summary.steps)
        out.append("")
        if len(shown) < len(summary.steps):
            out.append(heading + ":")
        out += lines(STEPS.view(shown).grid(), markdown)
        shared = overlapping_steps(summary.steps)
        if shared is not None:
            out.append(shared)
    out.append("")
    if not report.rows:  # as the pane says it
        what = "GPU work" if report.table.name == "kernels" else "ops"
        out.append(f"No {what} in this {'trace' if scope is None else 'scope'}.")
        return "\n".join(out) + "\n"
    out += lines(report.view(top).grid(), markdown)
    if report.frames_hidden:
        out += ["", frames_hidden_line(report.frames_hidden, "--python-frames")]
    return "\n".join(out) + "\n"


def frames_hidden_line(hidden: int, how: str) -> str:
    """Under an op table that leaves its Python-frame rows out: how many, and what lists them."""
    return (
        f"{counted(hidden, 'Python-frame row')} (with_stack=True) not listed, their time in "
        f"the totals: {how} lists them"
    )


def overlapping_steps(steps: list[StepRow]) -> str | None:
    """What the strip says when steps' GPU spans overlap (None: they do not)."""
    shared = [row for row in steps if row.overlap_ns]
    if not shared:
        return None
    total = format_duration(sum(row.overlap_ns for row in shared))
    return (
        f"GPU spans overlap: {counted(len(shared), 'step')} share{'s' * (len(shared) == 1)}"
        f" {total} with the next step's "
        "(pipelined); each step's GPU busy counts only the work it launched"
    )


# The strip and the text summary list every step up to this many; past it, the longest this
# many (a Static wraps all it holds to size itself: 3,324 steps took a second to lay out on
# each open; in text they pushed the op table thousands of lines down).
STRIP_STEPS = 24


def strip_steps(steps: list[StepRow]) -> tuple[list[StepRow], str]:
    """The steps the stats pane's strip and the text summary list, in step order, and their
    heading."""
    if len(steps) <= STRIP_STEPS:
        return steps, "Steps"
    longest = sorted(range(len(steps)), key=lambda i: -steps[i].dur_ns)[:STRIP_STEPS]
    return (
        [steps[i] for i in sorted(longest)],
        f"Steps ({len(steps):,}; the {STRIP_STEPS} longest by CPU time, "
        "`summary --format json` or csv lists all)",
    )
