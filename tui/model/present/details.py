"""What the details panel says about a slice or an idle gap, as (label, text) pairs."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..analysis.attribution import op_tree
from ..analysis.compiled import under_region
from ..analysis.gap_cpu import gap_cpu
from ..analysis.gaps import CAUSES, Gaps
from ..analysis.graphs import graphs, replay_of
from ..analysis.memory import counter_series
from ..analysis.roofline import Roofline, ShapeRow, above_roof_reason, one_call
from ..analysis.syncs import overlapping
from ..patterns import STREAM_WAIT_NAME
from ..text import printable
from ..timescale import format_bytes, format_duration, format_time
from ..trace import Trace
from .names import shown_names
from .navigate import (
    ancestors,
    caused_work,
    children,
    flows_back,
    flows_forward,
    launch_of_work,
    launched_work,
)

MAX_ARGS = 40
MAX_LINKS = 8


def slice_details(trace: Trace, row: int) -> list[tuple[str, str]]:
    """Everything about one slice, the most telling first: for GPU work its launch, the op
    that issued it and how long it was queued; for a launch or an op the work it started.
    Args are decoded now, from the file."""
    s = trace.slices
    lane = trace.lane_of(row)
    start, dur = int(s.start[row]), int(s.dur[row])
    kids = children(trace, row)
    out = [("name", _name(trace, row))]
    display = shown_names(trace)
    if display.is_demangled(row):
        form = "as recorded" if display.raw else "demangled"
        other = "demangled" if display.raw else "as recorded"
        out.append(("C++ name", f"shown {form}: M shows every name {other}"))
    out.append(("duration", format_duration(dur)))
    launch = launch_of_work(trace, row)
    if launch >= 0:
        queued = start - int(s.start[launch])
        out.append(
            (
                "launched by",
                f"{_name(trace, launch)} on {trace.lane_of(launch).name}, queued "
                f"{format_duration(queued)} before it ran",
            )
        )
        op = int(op_tree(trace).up[launch])
        if op >= 0:
            out.append(("issuing op", _name(trace, op)))
    graph = _graph_line(trace, row)
    if graph is not None:
        out.append(graph)
    region = under_region(trace, row) if lane.kind == "cpu" else None
    if region is not None:
        kernels, gpu, share, where = region
        out.append(
            (
                "compiled region",
                f"{kernels:,} kernels launched under it, {format_duration(gpu)} of GPU work, "
                f"{share:.0%} of {printable(where)}'s",
            )
        )
    started = launched_work(trace, row)
    if started:
        out.append(("starts", _started(trace, started, start)))
    elif lane.kind == "cpu":
        work = caused_work(trace, row)
        if work:
            total = int(s.dur[work].sum())
            names = ", ".join(dict.fromkeys(_name(trace, w) for w in work[:MAX_LINKS]))
            more = f" and {len(work) - MAX_LINKS} more" if len(work) > MAX_LINKS else ""
            out.append(
                (
                    "GPU work",
                    f"{len(work):,} launched under it, {format_duration(total)} in all "
                    f"(] goes to the first): {names}{more}",
                )
            )
    args = trace.args(row)
    modelled = one_call(trace, row, args) if lane.kind == "cpu" else None
    if modelled is not None:  # before the long lists: what it computed, how fast
        out.append(("work", _work(*modelled)))
    for label, rows in (
        ("flows to", flows_forward(trace, row)),
        ("flows from", flows_back(trace, row)),
    ):
        if rows:
            names = ", ".join(_name(trace, r) for r in rows[:MAX_LINKS])
            more = f" and {len(rows) - MAX_LINKS} more" if len(rows) > MAX_LINKS else ""
            out.append((label, names + more))
    out += [
        ("self", format_duration(dur - int(s.dur[kids].sum()))),
        ("lane", f"{trace.processes[lane.process].name} / {lane.name}"),
        ("start", _when(trace, start)),
        ("category", trace.categories[int(s.cat[row])] or "(none)"),
    ]
    if STREAM_WAIT_NAME.match(trace.slice_name(row)):  # as recorded
        out.append(
            (
                "stream wait",
                "makes a GPU stream wait for an event of another stream; the CPU goes on at once",
            )
        )
    chain = ancestors(trace, row)
    if chain:
        out.append(("parents", " < ".join(_name(trace, p) for p in chain)))
    if isinstance(args, dict):
        for key, value in list(args.items())[:MAX_ARGS]:
            out.append((f"  {key}", _value(value)))
        if len(args) > MAX_ARGS:
            out.append(("  ...", f"{len(args) - MAX_ARGS} more args"))
    elif args is not None:
        out.append(("args", _value(args)))
    return out


def _graph_line(trace: Trace, row: int) -> tuple[str, str] | None:
    """Where a CUDA graph replay's launch or kernel sits: which graph, which replay of it."""
    found = graphs(trace)
    at = replay_of(found, row)
    if at is None:
        return None
    r, nth, place = at
    replay = found.replays[r]
    graph = found.graphs[replay.graph]
    of = f"{graph.label}, replay {nth + 1:,} of {graph.calls:,}"
    if place < 0:
        gpu = format_duration(int(trace.slices.dur[replay.work].sum()))
        return (
            "graph replay",
            f"{of}: {len(replay.work):,} kernels, {gpu} of GPU work (] goes to the first, n "
            "walks them)",
        )
    return ("graph", f"{of}: kernel {place + 1:,} of {len(replay.work):,} ([ goes to the launch)")


def _work(call: ShapeRow, roof: Roofline) -> str:
    """What this call computed and how fast its kernels did it."""
    w = call.work
    text = f"{w.flops / 1e9:.4g} GFLOP, {w.bytes / 1e6:.4g} MB ({w.intensity:.1f} FLOP/B)"
    if call.tflops is None:
        return text + "; no GPU work under it"
    text += f"; its kernels: {call.tflops:.2f} TFLOP/s, {call.tbs:.3f} TB/s"
    share, failed = roof.percent_of_peak(call), roof.above_roof(call)
    if share is not None and roof.peaks is not None:
        text += f", {share[0]:.1f}% of the {roof.peaks.device}'s roof ({share[1]} side)"
    elif failed is not None and roof.peaks is not None:
        text += f"; {above_roof_reason(failed)} on the {roof.peaks.device}, so no % of roof"
    return text


def _started(trace: Trace, rows: list[int], t: int) -> str:
    parts = [
        f"{_name(trace, r)} (ran {format_duration(int(trace.slices.start[r]) - t)} after this call)"
        for r in rows[:MAX_LINKS]
    ]
    more = f" and {len(rows) - MAX_LINKS} more" if len(rows) > MAX_LINKS else ""
    return "; ".join(parts) + more


def gap_details(trace: Trace, gaps: Gaps, index: int) -> list[tuple[str, str]]:
    """An idle gap: where, how long, why (HTA's rule) and what the CPU did meanwhile, before
    the work that ended it (the first rows are what a small terminal shows)."""
    lane = trace.lanes[int(gaps.lane[index])]
    start, end = int(gaps.start[index]), int(gaps.end[index])
    device = trace.processes[lane.process].name
    whole = bool(gaps.whole_device[index])
    out = [
        ("idle gap", format_duration(end - start) + (" (every GPU stream idle)" if whole else "")),
        ("lane", "every GPU stream" if whole else f"{device} / {lane.name}"),
        ("from", _when(trace, start)),
        ("to", _when(trace, end)),
        ("cause", CAUSES[int(gaps.cause[index])]),
    ]

    def covers(row: int, covered: int) -> str:
        return (
            f"{_name(trace, row)} on {trace.lane_of(row).name} covers "
            f"{format_duration(covered)} ({covered / max(end - start, 1):.0%}) of it"
        )

    syncs = overlapping(trace, start, end)[:3]
    launch = launch_of_work(trace, int(gaps.next_work[index]))
    launcher = int(trace.lane_indices(np.asarray([launch]))[0]) if launch >= 0 else -1
    cpu = gap_cpu(trace, start, end, first_lane=launcher)
    if cpu.dataloader_ns:
        share = cpu.dataloader_ns / max(end - start, 1)
        out.append(("DataLoader", f"covers {format_duration(cpu.dataloader_ns)} ({share:.0%})"))
    waiting = {row for row, _ in syncs}
    out += [("CPU in", covers(r, c)) for r, c in cpu.calls if r not in waiting]
    out += [("CPU waiting", covers(r, c)) for r, c in syncs]
    out.append(("next work", f"{_name(trace, int(gaps.next_work[index]))} on {lane.name}"))
    if launch >= 0:
        issued = int(trace.slices.start[launch]) - start
        out.append(
            (
                "its launch",
                f"{_name(trace, launch)}, "
                f"{format_duration(abs(issued))} {'after' if issued > 0 else 'before'} "
                "the GPU went idle",
            )
        )
    return out


def _name(trace: Trace, row: int) -> str:
    """A slice's name as the viewer shows it now (demangled, or as recorded)."""
    return shown_names(trace).of(row)


def _when(trace: Trace, t: int) -> str:
    text = f"+{format_time(t)}"
    if trace.base_time_ns is not None:
        absolute = trace.base_time_ns + t
        seconds, ns = divmod(absolute, 1_000_000_000)
        stamp = np.datetime64(seconds, "s").astype(str).replace("T", " ")
        text += f"  ({stamp}.{ns:09d} UTC)"
    return text


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (RecursionError, ValueError):
        return "(too deeply nested to show)"


def is_memory(name: str) -> bool:
    """Whether a counter is one of the allocator's series (bytes)."""
    return name.endswith((" allocated", " reserved"))


def counter_value(name: str, value: float) -> str:
    """A counter's value: in bytes for the allocator's series, else as a number."""
    return format_bytes(value) if is_memory(name) else f"{value:,.6g}"


def counter_details(trace: Trace, counter: int, window: tuple[int, int]) -> list[tuple[str, str]]:
    """A counter: its value at the middle of the view, and its highest in view and overall."""
    series = counter_series(trace)[counter]
    t0, t1 = window
    middle = (t0 + t1) // 2
    k = int(np.searchsorted(series.ts, middle, side="right")) - 1
    in_view = series.values[(series.ts >= t0) & (series.ts < t1)]

    def show(value: float) -> str:
        return counter_value(series.name, value)

    return [
        ("counter", series.name),
        (
            "at the centre",
            f"{show(float(series.values[k])) if k >= 0 else '-'}  (+{format_time(middle)})",
        ),
        ("highest in view", show(float(in_view.max())) if len(in_view) else "-"),
        ("highest", show(float(series.values.max())) if len(series.values) else "-"),
        ("samples", f"{len(series.ts):,}"),
    ]
