"""The arguments of every command that reads a trace: the path or bundled sample it names, and
the flags that shape its load. Apart from loading.py, so that parsing them imports nothing of
the model (`info` on a cached trace loads nothing)."""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec

from tui.commands.command import warn

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


class Sample(msgspec.Struct, frozen=True):
    """A trace shipped in the package (in the wheel, so any install opens it)."""

    file: str
    about: str  # the header's name for it, in place of a path in site-packages

    @property
    def path(self) -> Path:
        return SAMPLES / self.file


# What `trace-tui` opens with no file named. The default is a small real GPU trace from
# TraceLens's tests (MIT; tui/samples/README.md) until our backend has run on a GPU: a first
# look should show CPU against GPU, which our own CPU sample cannot.
SAMPLE_CHOICES = {
    "gpu": Sample(
        "h100_bert_small.json.gz",
        "bundled example: BERT-small, H100 (TraceLens, MIT)",
    ),
    "cpu": Sample(
        "transformer_128_cpu.pt.trace.json.gz",
        "bundled example: transformer decode, CPU (ours)",
    ),
}
DEFAULT_SAMPLE = "gpu"


def add_path_or_sample(parser: argparse.ArgumentParser, what: str) -> None:
    """The trace a command reads: a path, or one of the bundled samples (the GPU one when
    neither is given)."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument("path", nargs="?", help=f"{what}; default: a bundled example")
    which.add_argument(
        "--sample",
        choices=sorted(SAMPLE_CHOICES),
        help="open a bundled example: gpu (the default, an H100 trace) or cpu (ours)",
    )


def chosen(args: argparse.Namespace) -> tuple[str, str | None]:
    """(the path to read, the header's name for it: None for a path the user named)."""
    if args.path is not None:
        return args.path, None
    sample = SAMPLE_CHOICES[args.sample or DEFAULT_SAMPLE]
    return str(sample.path), sample.about


def chosen_headless(args: argparse.Namespace) -> str:
    """The path for a text command; a bundled example is named on stderr, so that the output
    (JSON included) stays the trace's own."""
    path, about = chosen(args)
    if about is not None:
        warn(f"no trace named: reading the {about}")
    return path


def add_load_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of every command that loads a trace."""
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="load from the file even if its model is cached, and cache nothing",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="load even when the trace may need more memory than is free",
    )
    parser.add_argument(
        "--workers",
        type=positive,
        help="processes that read a folder of rank traces, or one big trace (default: one "
        "per core, or TRACE_TUI_WORKERS; small sets and files under 128 MB use one)",
    )


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a number of 1 or more: {text!r}")
    return int(text)


def add_interval_flag(parser: argparse.ArgumentParser) -> None:
    """`--interval`, how often `--follow` looks at the folder (view and summary)."""
    parser.add_argument(
        "--interval",
        type=seconds,
        default=2.0,
        metavar="S",
        help="--follow: seconds between looks at the folder (default 2)",
    )


def seconds(text: str) -> float:
    """`--interval`: looking more often than every tenth of a second would only spin the CPU."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.1 <= value < 86400:  # NaN and infinity fail too
        raise argparse.ArgumentTypeError(f"not a number of seconds from 0.1 to 86400: {text!r}")
    return value
