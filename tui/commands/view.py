"""`trace-tui view [FILE|FOLDER] [NEW]` (what a bare path runs): the viewer, or `--list`."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import tempfile
import time
from pathlib import Path

from tui.commands.cluster import add_cluster_flag, cluster_executor
from tui.commands.command import PROG, CommandError
from tui.commands.loading import cache_for, enough_memory, rank_set
from tui.commands.trace_args import add_interval_flag, add_load_flags, add_path_or_sample, chosen
from tui.model.errors import TraceError
from tui.model.ingest.formats import check_start, no_traces_reason, scan_folder
from tui.model.ingest.source import max_stream_bytes
from tui.model.ingest.watch import Watch
from tui.model.text import printable


class ViewCommand:
    name = "view"
    help = "open a trace, a folder of rank traces or two traces to compare (the default)"
    description = "View a PyTorch profiler (Chrome format) trace in the terminal."

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        add_path_or_sample(
            parser, "trace file (.json, .json.gz) or a tensorboard_trace_handler folder"
        )
        parser.add_argument(
            "new",
            nargs="?",
            help="a second trace: both open, o switches between them and D shows what changed",
        )
        parser.add_argument(
            "--list",
            action="store_true",
            help="list the traces in the folder, newest first, and exit",
        )
        parser.add_argument(
            "--follow",
            action="store_true",
            help="the folder a running job writes traces into: open its newest trace (or rank "
            "set) and say when a newer one is complete; F opens it at the same step and place",
        )
        add_interval_flag(parser)
        add_load_flags(parser)
        add_cluster_flag(parser)

    def run(self, args: argparse.Namespace) -> int:
        path, shown_as = chosen(args)
        if args.list:
            return _list(path)
        if path == "-":
            path, shown_as = _spool_stdin(), "standard input"
        if args.follow and (args.new is not None or not Path(path).is_dir()):
            raise CommandError("--follow needs one folder (where the job writes its traces)", 2)
        watch = Watch(Path(path)) if args.follow else None
        try:
            if watch is None or watch.newest is not None:  # else: none written yet
                check_start(path)  # cheap checks before the terminal is taken over
            if args.new is not None:
                check_start(args.new)
        except TraceError as e:
            raise CommandError(str(e)) from e
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise CommandError(
                "the viewer needs a terminal; for text output use: trace-tui info FILE", 2
            )
        if watch is not None and watch.newest is None:
            _wait_for_a_trace(watch, path, args.interval)
        if not enough_memory(path, args, ask=True):
            return 1
        from tui.cli import make_app  # the app factory (tests build the app with it too)

        ranks = rank_set(path)[0] if args.new is None else None
        with cluster_executor(args.cluster, ranks) as executor:
            follow = args.interval if args.follow else None
            app = make_app(
                path, cache_for(args), shown_as, args.workers, args.new, executor, follow, watch
            )
            app.run()
        if app.load_error is not None:
            raise CommandError(app.load_error)
        return app.return_code or 0


def _wait_for_a_trace(watch: Watch, folder: str, interval: float) -> None:
    """--follow on a folder with no complete trace yet (the job has not written one): wait
    for the first, as `summary --follow` does."""
    print(f"waiting for a complete trace in {printable(folder)} (ctrl+c stops)", flush=True)
    try:
        while not watch.poll():
            time.sleep(interval)
    except KeyboardInterrupt:
        raise CommandError("stopped before a trace was written", 130) from None


def _spool_stdin() -> str:
    """`zcat t.json.gz | trace-tui -`: keep the piped trace in a temporary file, then take the
    keyboard from the terminal, since standard input was the pipe."""
    fd, name = tempfile.mkstemp(prefix="trace-tui-stdin-", suffix=".json")
    atexit.register(os.unlink, name)
    limit, copied = max_stream_bytes(), 0
    with os.fdopen(fd, "wb") as out:  # as it came (gzip or not): the loader reads it as a file
        while block := sys.stdin.buffer.read(1 << 20):
            copied += len(block)
            if copied > limit:
                raise CommandError(
                    f"<stdin>: stopped reading after {limit:,} bytes; set "
                    "TRACE_TUI_MAX_BYTES to read more from a pipe"
                )
            out.write(block)
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        raise CommandError(
            "the viewer needs a terminal for its keys; for text use: trace-tui info -", 2
        ) from None
    os.dup2(tty, 0)
    os.close(tty)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 (fd 0, now the terminal)
    return name


def _list(path: str) -> int:
    if not Path(path).is_dir():
        raise CommandError(f"{path}: --list needs a folder", 2)
    traces, others = scan_folder(path)
    if not traces:
        raise CommandError(f"{path}: {no_traces_reason(others)}")
    for i, trace in enumerate(traces):
        print(printable(str(trace)) + ("  (newest, opened by default)" if i == 0 else ""))
    if others:
        names = ", ".join(printable(p.name) for p in others)
        print(f"{PROG}: skipped {len(others)} that are not traces: {names}", file=sys.stderr)
    return 0
