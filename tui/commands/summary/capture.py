"""`summary --capture PATH`: the trace of a graph-capture phase, whose ops give the kernels of
the graph replays in the trace summarised their FLOPs and bytes (analysis/replay_work.py).

PATH is the capture trace, or TraceLens's `execution_details.json` (or a folder holding one),
which names the capture files: the first one that exists is read.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tui.commands.command import CommandError
from tui.commands.loading import load
from tui.model.trace import Trace

DETAILS = "execution_details.json"


def capture_trace(args: argparse.Namespace) -> Trace | None:
    """The capture trace `--capture` names (None: no flag)."""
    if args.capture is None:
        return None
    return load(args, str(_capture_file(Path(args.capture))))


def _capture_file(path: Path) -> Path:
    details = path / DETAILS if path.is_dir() else path
    if not details.name.endswith(DETAILS):
        return path
    try:
        entries = json.loads(details.read_bytes())
    except (OSError, ValueError) as e:
        raise CommandError(f"--capture: cannot read {details}: {e}") from None
    names = (
        [e.get("file") for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    )
    for name in names:
        if isinstance(name, str) and (details.parent / name).is_file():
            return details.parent / name
    raise CommandError(f"--capture: {details} names no capture trace that is there")
