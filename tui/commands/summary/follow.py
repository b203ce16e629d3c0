"""`summary --follow DIR`: a running log, one line per trace a running job writes into DIR (the
newest there first), until ctrl+c."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from tui.commands.command import CommandError
from tui.commands.loading import cache_for
from tui.model.analysis.summary import summarize
from tui.model.errors import TraceError
from tui.model.ingest.watch import Watch
from tui.model.passes import load_trace
from tui.model.text import printable
from tui.model.timescale import format_duration


def follow(folder: str, args: argparse.Namespace) -> int:
    if not Path(folder).is_dir():
        raise CommandError(f"{printable(folder)}: --follow needs a folder", 2)
    watch = Watch(Path(folder))
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
    """One line: when, which file, its steps, median step, GPU busy and verdict."""
    stamp = time.strftime("%H:%M:%S")
    try:
        trace = load_trace(path, cache=cache_for(args), workers=args.workers)
    except TraceError as e:
        print(f"{stamp} {printable(str(e))}", flush=True)
        return
    summary = summarize(trace)
    steps = [s.dur_ns for s in summary.steps]
    median = format_duration(int(statistics.median(steps))) if steps else "-"
    gpu = summary.gpu_time
    busy = f"{gpu.busy_ns / gpu.window_ns:.1%}" if gpu.window_ns else "-"
    cut = " (the file ended early: what was read)" if trace.format.truncated else ""
    print(
        f"{stamp} {printable(path.name)}: {len(steps)} steps, median step {median}, "
        f"GPU busy {busy}, {summary.verdict.label}{cut}",
        flush=True,
    )
