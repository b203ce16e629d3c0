"""Loading a trace for a command: the flags that shape a load, the memory check, the rank set a
folder holds, and the bundled sample opened when no file is named."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from tui.commands.command import PROG, CommandError, warn
from tui.model.errors import TraceError
from tui.model.ingest.cache import ModelCache
from tui.model.ingest.footprint import available_memory, estimate_memory
from tui.model.ingest.formats import check_start
from tui.model.ingest.rank_folder import RankFiles, rank_files
from tui.model.passes import load_trace
from tui.model.text import printable
from tui.model.trace import Trace

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@dataclass(frozen=True)
class Sample:
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


def seconds(text: str) -> float:
    """`--interval`: looking more often than every tenth of a second would only spin the CPU."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.1 <= value < 86400:  # NaN and infinity fail too
        raise argparse.ArgumentTypeError(f"not a number of seconds from 0.1 to 86400: {text!r}")
    return value


def cache_for(args: argparse.Namespace) -> ModelCache | None:
    return None if args.no_cache else ModelCache()


def load(args: argparse.Namespace, path: str) -> Trace:
    """Load for a headless command; a trace that cannot be read is a CommandError."""
    try:
        check_start(path)
        enough_memory(path, args, ask=False)  # it warns; a headless load goes on
        return load_trace(path, cache=cache_for(args), workers=args.workers)
    except TraceError as e:
        raise CommandError(str(e)) from e


def enough_memory(path: str, args: argparse.Namespace, ask: bool) -> bool:
    """Warn before a load likely to need more memory than is free; the viewer asks first."""
    need, free = (0 if path == "-" else estimate_memory(path)), available_memory()
    if args.yes or free is None or need <= free:
        return True
    print(
        f"{PROG}: warning: loading {printable(path)} may need about {need / 2**30:.1f} GiB "
        f"of memory; {free / 2**30:.1f} GiB is free",
        file=sys.stderr,
    )
    if not ask or not sys.stdin.isatty():
        return True
    answer = input("Load it anyway? [y/N] ").strip().lower()
    return answer in ("y", "yes")


def rank_set(path: str | None) -> tuple[RankFiles | None, str | None]:
    """(the rank set a folder holds, None); (None, why not) for a folder of several jobs;
    (None, None) for anything else."""
    if path is None or not Path(path).is_dir():
        return None, None
    ranks = rank_files(path)
    if ranks is not None and ranks.mixed is not None:
        why = f"{printable(path)}: {ranks.mixed}: not compared as ranks; the newest trace is used"
        return None, why
    return ranks, None
