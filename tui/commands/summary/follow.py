"""`summary --follow DIR`: a running log, one line per trace a running job writes into DIR (the
newest there first), until ctrl+c."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import orjson

from tui.commands.command import CommandError
from tui.commands.loading import cache_for
from tui.model.analysis.summary import summarize
from tui.model.errors import TraceError
from tui.model.ingest.watch import Watch
from tui.model.passes import load_trace
from tui.model.text import counted, printable
from tui.model.timescale import format_duration


def follow(folder: str, args: argparse.Namespace) -> int:
    if not Path(folder).is_dir():
        raise CommandError(f"{printable(folder)}: --follow needs a folder", 2)
    watch = Watch(Path(folder))
    if args.format != "json":  # JSON lines stay JSON
        print(f"following {printable(folder)} (ctrl+c stops)", flush=True)
    try:
        if watch.newest is not None:
            _say(watch.newest, args)
        while True:
            time.sleep(args.interval)
            for path in watch.poll():
                _say(path, args)
    except KeyboardInterrupt:  # how the log is stopped: not an error
        return 0


def _say(path: Path, args: argparse.Namespace) -> None:
    """One line: when, which file, its steps, median step, GPU busy and verdict (a JSON object
    with --format json)."""
    stamp = time.strftime("%H:%M:%S")
    try:
        trace = load_trace(path, cache=cache_for(args), workers=args.workers)
    except TraceError as e:
        if args.format == "json":
            failed = {"time": stamp, "file": str(path), "error": str(e)}
            print(orjson.dumps(failed).decode(), flush=True)
        else:
            print(f"{stamp} {printable(str(e))}", flush=True)
        return
    summary = summarize(trace)
    steps = [s.dur_ns for s in summary.steps]
    median = int(statistics.median(steps)) if steps else None
    gpu = summary.gpu_time
    busy = gpu.busy_ns / gpu.window_ns if gpu.window_ns else None
    truncated = trace.format.truncated
    if args.format == "json":
        line = {
            "time": stamp,
            "file": str(path),
            "steps": len(steps),
            "step_median_ns": median,
            "gpu_busy": busy,
            "verdict": summary.verdict.label,
            "truncated": truncated,
        }
        print(orjson.dumps(line).decode(), flush=True)
        return
    shown_median = format_duration(median) if median is not None else "-"
    shown_busy = f"{busy:.1%}" if busy is not None else "-"
    cut = " (the file ended early: what was read)" if truncated else ""
    print(
        f"{stamp} {printable(path.name)}: {counted(len(steps), 'step')}, median step "
        f"{shown_median}, GPU busy {shown_busy}, {summary.verdict.label}{cut}",
        flush=True,
    )
