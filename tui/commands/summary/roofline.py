"""`summary --roofline`: FLOPs, bytes and achieved rates against the device's peaks, by op and
input shapes."""

from __future__ import annotations

import argparse
import sys

from tui.commands.command import CommandError
from tui.model.analysis.replay_work import with_replays
from tui.model.analysis.roofline import roofline
from tui.model.analysis.scope import Scope
from tui.model.present.render.csv import as_csv
from tui.model.present.roofline_report import as_csv as csv_tables
from tui.model.present.roofline_report import as_json, as_text
from tui.model.trace import Trace


def show(trace: Trace, args: argparse.Namespace, scope: Scope) -> None:
    """The whole trace's (the view refuses --step, so `scope` is all of it)."""
    try:
        result = with_replays(roofline(trace, args.peaks), trace, args.capture_trace)
    except ValueError as e:
        raise CommandError(f"--peaks: {e}", 2) from e
    if args.format == "csv":
        sys.stdout.write(as_csv(csv_tables(result, args.top)))
    elif args.format == "json":
        sys.stdout.buffer.write(as_json(trace, result, args.top))
    else:
        sys.stdout.write(as_text(trace, result, args.top, args.format == "markdown"))
