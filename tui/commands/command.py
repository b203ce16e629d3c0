"""What every command is: the `Command` protocol, the one error type, and what they share."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Protocol

import msgspec

from tui.model.text import printable

PROG = "trace-tui"
GATE_FAILED = 3  # the exit status of diff's --fail-on-regression when the metric grew too much
# The output formats of the headless commands (summary, diff): one place, so a new one is one edit
# here (and its renderer).
FORMATS = ("text", "markdown", "json", "csv")


class CommandError(Exception):
    """Why a command stops: `main` prints `trace-tui: MESSAGE` as one line on stderr and exits
    with `code` (1: the input, 2: the usage, 3: a failed regression gate)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class Command(Protocol):
    """One subcommand (memray's `commands/` way): `main` gives it its own subparser to fill,
    then runs it with what was parsed."""

    name: str  # `trace-tui NAME ...`
    help: str  # its line in `trace-tui --help`
    description: str  # the head of `trace-tui NAME --help`

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class Registered(msgspec.Struct, frozen=True):
    """A command by its name, and where its class is (`module:Class`), imported when needed."""

    name: str
    where: str

    def load(self) -> Command:
        module, _, cls = self.where.partition(":")
        command: Command = getattr(importlib.import_module(module), cls)()
        return command


def warn(message: str) -> None:
    """One line on stderr that does not stop the command."""
    print(f"{PROG}: {printable(message)}", file=sys.stderr)


def add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=FORMATS[0],
        help="csv: each table in turn, from a header row whose first cell is `table` (each "
        "row's first cell names its table); the cells are the JSON's values",
    )
