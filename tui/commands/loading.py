"""Loading a trace for a command: the memory check, the load itself, and the rank set a folder
holds (the arguments that name the trace and shape its load are trace_args.py's)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tui.commands.command import PROG, CommandError
from tui.model.errors import TraceError
from tui.model.ingest.cache import ModelCache
from tui.model.ingest.footprint import available_memory, estimate_memory
from tui.model.ingest.formats import check_start
from tui.model.ingest.rank_folder import RankFiles, rank_files
from tui.model.passes import load_trace
from tui.model.text import printable
from tui.model.trace import Trace


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
