"""Command line: `trace-tui [FILE|FOLDER [NEW]]` (the viewer), `trace-tui COMMAND ...` for the
commands registered in `tui.commands`. Here: the parser built from that list, the exit codes,
and the app factory."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from tui import commands
from tui.commands.command import PROG, Command, CommandError, warn

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from tui.app import TraceApp
    from tui.model.ingest.cache import ModelCache
    from tui.model.ingest.watch import Watch


def make_app(
    path: str | Path,
    cache: ModelCache | None = None,
    shown_as: str | None = None,
    workers: int | None = None,
    new: str | Path | None = None,
    executor: Executor | None = None,
    follow: float | None = None,
    watch: Watch | None = None,
) -> TraceApp:
    """The viewer for one trace, for a folder of one job's rank traces (its rank table), or for
    two traces to compare, BASE `path` and `new` (tests drive this with Pilot); `follow`: the
    seconds between looks for new traces in the folder `path` (--follow), and the `watch` on it
    the command has already made."""
    from tui.app import TraceApp
    from tui.commands.loading import rank_set

    if new is not None:
        return TraceApp(str(path), cache, shown_as, None, workers, None, str(new))
    ranks, notice = rank_set(str(path))
    if ranks is not None:
        from tui.model.passes.ranks import prepare_pool

        prepare_pool()
    return TraceApp(
        str(path), cache, shown_as, ranks, workers, notice, None, executor, follow, watch
    )


def main(argv: Sequence[str] | None = None) -> int:
    # numpy's OpenBLAS starts a thread per core when numpy is imported, and each spins on its
    # core for about 0.05-0.1 s waiting for work that never comes (nothing here does linear
    # algebra): on a 64-core GPU box, seconds of CPU per command. Set before any command
    # imports numpy (the workers it starts inherit it); a user's own setting stands.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:
        # The reader went away (`trace-tui info FILE | head`): end quietly, as `cat` does. Point
        # stdout at nothing so that the interpreter's own flush at exit cannot fail again.
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        return 0


def _run(args: list[str]) -> int:
    names = [c.name for c in commands.COMMANDS]
    if not args or (args[0] not in names and args[0] not in ("-h", "--help")):
        args = [names[0], *args]  # a bare path, or nothing: the viewer
    # Only the command that runs is imported; `trace-tui --help` lists them all.
    wanted = [c for c in commands.COMMANDS if c.name == args[0]] or commands.COMMANDS
    parser, subparsers = _parser([c.load() for c in wanted])
    try:
        opts, unknown = parser.parse_known_args(args)
        if unknown:  # said by the command's own parser, with its own usage
            subparsers[args[0]].error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as e:  # argparse's usage errors (2) and --help (0)
        return int(e.code or 0)
    command: Command = opts.command
    try:
        return command.run(opts)
    except CommandError as e:
        warn(str(e))
        return e.code


class _Parser(argparse.ArgumentParser):
    """Argparse, whose usage errors are one line (the usage stays with --help)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parser(
    registered: Sequence[Command],
) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser of `trace-tui`, with one subparser per registered command (by name)."""
    viewer = registered[0].name
    parser = _Parser(
        prog=PROG,
        usage=f"{PROG} [FILE|FOLDER [NEW]] [options]\n       {PROG} COMMAND [options] ...",
        description="View and summarise PyTorch profiler (Chrome format) traces in the terminal.",
        epilog=f"A bare path, or none, runs {viewer}: {PROG} FILE is {PROG} {viewer} FILE. "
        f"{PROG} COMMAND --help tells the flags of each.",
    )
    choices = parser.add_subparsers(title="commands", metavar="COMMAND", prog=PROG)
    subparsers: dict[str, argparse.ArgumentParser] = {}
    for command in registered:
        sub = choices.add_parser(command.name, help=command.help, description=command.description)
        command.prepare_parser(sub)
        sub.set_defaults(command=command)
        subparsers[command.name] = sub
    return parser, subparsers
