"""`trace-tui summary FILE --roofline`: the ops the performance model knows, by name and input
shapes, with FLOPs, bytes, intensity, achieved TFLOP/s and TB/s and the share of the device's
peak, as text, Markdown or JSON.

JSON schema: device, peaks {bf16, fp16, tf32, fp32, fp8 (TFLOP/s), int8 (TOPS; null: none),
  hbm_tbs} | null,
  shapes_recorded, note, totals {flops, gpu_ns, tflops}, coverage (the modelled ops' kernels'
  share of all GPU work time, 0..1),
  by_kind: [{kind, flops, gpu_ns, tflops, percent_of_roof (weighted by kernel time, rows above
  their roof left out), bound}], above_roof: [{assumption ("HBM bandwidth" | "<dtype> peak"),
  reason, rows, gpu_ns}] (rows that ran faster than their roof allows: no percentage for them),
  dtype (the peak MFU is taken of), window and steps: [{name, window_ns, flops, tflops,
  mfu (0..1 | null)}], rows: [{name, input_dims, input_types, dtype, kind,
  calls, gpu_ns, min_ns, max_ns, flops_per_call, bytes_per_call, flops_per_byte, tflops, tbs,
  percent_of_roof (null above the roof), above_roof (the assumption that failed | null), bound
  ("compute" | "memory" | null), idle_calls (calls that ran no kernel:
  not in the rates)}]
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..analysis.replay_work import with_replays
from ..analysis.roofline import (
    KindTotal,
    Roofline,
    ShapeRow,
    Utilisation,
    above_roof_reason,
    coverage,
    modelled_calls,
    roofline,
)
from ..analysis.steps import launch_window, profiled_window, step_windows
from ..text import counted, printable
from ..timescale import format_duration
from ..trace import Trace
from .render import lines
from .render.json import dumps
from .roofline_table import ROOFLINE, roof_rows
from .table_spec import Grid

NO_SHAPES = "profile with record_shapes=True for FLOPs: this trace has no input shapes"
# The summary reads the args of at most this many modelled calls for its Roofline line (about
# a second's work); beyond it the line points to `summary --roofline`.
IN_SUMMARY = 200_000


def note(r: Roofline) -> str | None:
    """One line on what cannot be shown, or None."""
    if not r.shapes_recorded:
        return NO_SHAPES
    if not r.rows:
        return "no op here has shapes the performance model reads (GEMM, attention, conv...)"
    if not any(row.gpu_ns for row in r.rows):
        return "no GPU work under these ops: FLOPs and bytes only"
    if r.peaks is None:
        return (
            "unknown device: achieved rates without percentages (--peaks bf16=N,hbm=N or "
            "TRACE_TUI_PEAKS sets them)"
        )
    return None


def summary_roofline(
    trace: Trace, peaks: str | None = None, capture: Trace | None = None
) -> tuple[str | None, Roofline | None]:
    """The summary's Roofline line, and the roofline it was taken from, with the graph replays'
    work from `capture` (None: the trace's own capture, if any) (None when it was not computed:
    no modelled calls nor replays, or more than IN_SUMMARY calls, whose args take a while)."""
    calls = modelled_calls(trace)
    if calls > IN_SUMMARY:
        return f"{calls:,} modelled calls (GEMM, attention...): summary --roofline reads them", None
    r = with_replays(roofline(trace, peaks), trace, capture)
    if not calls and not r.replays_matched and not r.replays_unmatched_ns:
        return None, None
    return headline(trace, r), r


def headline(trace: Trace, r: Roofline) -> str | None:
    """The summary's one line: how close each kind of work ran to its roof, and the MFU (None
    for a trace without GPU work)."""
    if not trace.kind_mask("gpu").any():
        return None
    if not r.shapes_recorded:
        return NO_SHAPES
    kinds = [k for k in r.by_kind() if k.gpu_ns and k.percent_of_roof is not None]
    if not kinds:
        return "; ".join(filter(None, [note(r), *replay_notes(trace, r)])) or None
    parts = [f"{k.kind} at {k.percent_of_roof:.1f}% of its roof ({k.bound}-bound)" for k in kinds]
    window, _ = utilisation(trace, r)
    if window.mfu is not None:
        parts.append(f"MFU {window.mfu:.2%} of {r.peak_classes()} peak")
    share = coverage(trace, r)
    if share is not None:
        parts.append(f"these cover {share:.0%} of the GPU time")
    parts += replay_notes(trace, r)
    return "; ".join(parts) + " (summary --roofline: each op)"


def replay_notes(trace: Trace, r: Roofline) -> list[str]:
    """What the graph replays added, and what of them stays unmodelled and why."""
    out = []
    if r.replays_matched:
        out.append(
            f"{counted(r.replays_matched, 'graph replay')} counted with the ops of its capture"
        )
    if r.replays_unmatched_ns:
        out.append(_unmatched(r))
    return out


def _unmatched(r: Roofline) -> str:
    return (
        f"{r.replays_unmatched_share:.0%} of the GPU time ran in graph replays no capture "
        "matches, unmodelled (summary --capture FILE names the capture trace)"
    )


def verdict_note(verdict: str, r: Roofline | None) -> str | None:
    """For a compute-bound verdict, how close the two heaviest kinds of work ran to their roofs
    ("GEMM 9 ms at 61.9% of its roof (compute side), ..."); None for other verdicts."""
    if verdict != "compute-bound" or r is None:
        return None
    kinds = [k for k in r.by_kind() if k.gpu_ns and k.percent_of_roof is not None][:2]
    parts = [
        f"{k.kind} {format_duration(k.gpu_ns)} at {k.percent_of_roof:.1f}% of its roof "
        f"({k.bound} side)"
        for k in kinds
    ]
    if r.replays_unmatched_ns:
        parts.append(_unmatched(r))
    return ", ".join(parts) or None


def headline_json(trace: Trace, r: Roofline) -> dict[str, Any]:
    window, _ = utilisation(trace, r)
    return {
        "shapes_recorded": r.shapes_recorded,
        "device": r.peaks.device if r.peaks else None,
        "by_kind": [_kind_json(k) for k in r.by_kind()],
        "coverage": coverage(trace, r),
        "window": msgspec.to_builtins(window),
    }


def totals(r: Roofline) -> tuple[int, int, float | None]:
    """FLOPs and kernel time of the calls that ran kernels, and their rate."""
    flops = sum(row.flops for row in r.ran)
    gpu = sum(row.gpu_ns for row in r.ran)
    return flops, gpu, flops / gpu / 1e3 if gpu else None


def utilisation(trace: Trace, r: Roofline) -> tuple[Utilisation, list[Utilisation]]:
    """The profiled window's and each step's model FLOPs and MFU."""
    t0, t1 = profiled_window(trace)
    steps = [r.utilisation(name, a, b) for name, a, b in step_windows(trace)]
    return r.utilisation("profiled window", t0, t1, launch_window(trace)), steps


def as_json(trace: Trace, r: Roofline, top: int) -> bytes:
    flops, gpu, rate = totals(r)
    window, steps = utilisation(trace, r)
    doc: dict[str, Any] = {
        "path": trace.path,
        "device": r.peaks.device if r.peaks else None,
        "peaks": None
        if r.peaks is None
        else {
            k: getattr(r.peaks, k)
            for k in ("bf16", "fp16", "tf32", "fp32", "fp8", "int8", "hbm_tbs")
        },
        "shapes_recorded": r.shapes_recorded,
        "note": note(r),
        "totals": {"flops": flops, "gpu_ns": gpu, "tflops": rate},
        "coverage": coverage(trace, r),
        "by_kind": [_kind_json(k) for k in r.by_kind()],
        "above_roof": [_above_roof_json(*failed) for failed in above_roof(r)],
        "dtype": r.dtype_class(),
        "window": msgspec.to_builtins(window),
        "steps": [msgspec.to_builtins(u) for u in steps],
        "rows": ROOFLINE.view(roof_rows(r, _top(r.rows, top))).records(),
    }
    return dumps(doc)


def as_csv(r: Roofline, top: int) -> list[Grid]:
    return [ROOFLINE.view(roof_rows(r, _top(r.rows, top))).grid()]


def as_text(trace: Trace, r: Roofline, top: int, markdown: bool) -> str:
    flops, gpu, rate = totals(r)
    device = r.peaks.device if r.peaks else "unknown device"
    head = f"{printable(trace.path)}: {device}"
    out = [f"### trace-tui roofline: `{head}`" if markdown else head]
    why = note(r)
    if why is not None:
        out.append(why)
    if rate is not None:
        out.append(
            f"Modelled ops: {flops / 1e9:,.1f} GFLOPs in {format_duration(gpu)} of their kernels,"
            f" {rate:.1f} TFLOP/s"
        )
        out += [_kind_line(k) for k in r.by_kind() if k.gpu_ns]
    idle = sum(row.idle_calls for row in r.rows)
    if idle:
        out.append(
            f"{counted(idle, 'modelled call')} ran no kernels here (captured into a CUDA graph, "
            "or the work was elsewhere): left out of the rates and the MFU"
        )
    out += [_above_roof_line(*failed) for failed in above_roof(r)]
    share = coverage(trace, r)
    if rate is not None and share is not None:
        out.append(f"Modelled ops' kernels: {share:.0%} of GPU work time ({_unmodelled(share)})")
    out += [f"{line[0].upper()}{line[1:]}" for line in replay_notes(trace, r)]
    window, steps = utilisation(trace, r)
    if gpu and window.tflops is not None:  # no kernels ran (a graph capture): no rate
        mfu = f", MFU {window.mfu:.2%} of {r.peak_classes()} peak" if window.mfu is not None else ""
        out.append(
            f"{_window_name(len(steps))} ({format_duration(window.window_ns)}): "
            f"{window.flops / 1e9:,.1f} GFLOPs, {window.tflops:.2f} TFLOP/s{mfu}"
        )
    if r.rows:
        out.append("")
        out += lines(ROOFLINE.view(roof_rows(r, _top(r.rows, top))).grid(), markdown)
    return "\n".join(out) + "\n"


def _window_name(steps: int) -> str:
    return f"Profiled window, {steps} step{'s' * (steps != 1)}" if steps else "Whole trace"


def _unmodelled(share: float) -> str:
    """What a low coverage means for the MFU below."""
    if share >= 0.8:
        return "the rest is ops the model does not know"
    return "the MFU counts only these: the rest is ops the model does not know"


def above_roof(r: Roofline) -> list[tuple[str, list[ShapeRow]]]:
    """The rows that ran faster than their roof allows, by the assumption that failed."""
    failed: dict[str, list[ShapeRow]] = {}
    for row in r.above_roof_rows():
        failed.setdefault(r.above_roof(row) or "", []).append(row)
    return list(failed.items())


def _above_roof_line(failed: str, rows: list[ShapeRow]) -> str:
    gpu = format_duration(sum(row.gpu_ns for row in rows))
    return (
        f"{counted(len(rows), 'row')} ({gpu} of kernels) ran {above_roof_reason(failed)};"
        f" no % of roof is shown for them (> {failed})"
    )


def _above_roof_json(failed: str, rows: list[ShapeRow]) -> dict[str, Any]:
    return {
        "assumption": failed,
        "reason": above_roof_reason(failed),
        "rows": len(rows),
        "gpu_ns": sum(row.gpu_ns for row in rows),
    }


def _kind_line(k: KindTotal) -> str:
    text = (
        f"  {k.kind}: {k.flops / 1e9:,.2f} GFLOPs in {format_duration(k.gpu_ns)}, "
        f"{k.tflops:.2f} TFLOP/s"
    )
    if k.percent_of_roof is not None:
        text += f", {k.percent_of_roof:.1f}% of the roof (by kernel time; mostly {k.bound}-bound)"
    return text


def _kind_json(k: KindTotal) -> dict[str, Any]:
    return {**msgspec.to_builtins(k), "tflops": k.tflops}


def _top(rows: list[ShapeRow], top: int) -> list[ShapeRow]:
    return rows[:top] if top else rows
