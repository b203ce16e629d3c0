"""`summary --graphs`: the CUDA/HIP graphs replayed, each with its kernels per graph node."""

from __future__ import annotations

import argparse
import sys

from tui.model.analysis.graphs import graphs
from tui.model.analysis.scope import Scope
from tui.model.present.graph_report import as_csv as csv_tables
from tui.model.present.graph_report import as_json, as_text
from tui.model.present.render.csv import as_csv
from tui.model.trace import Trace


def show(trace: Trace, args: argparse.Namespace, scope: Scope) -> None:
    """The whole trace's (the view refuses --step, so `scope` is all of it)."""
    found = graphs(trace)
    if args.format == "csv":
        sys.stdout.write(as_csv(csv_tables(trace, found, args.top)))
    elif args.format == "json":
        sys.stdout.buffer.write(as_json(trace, found, args.top))
    else:
        sys.stdout.write(as_text(trace, found, args.top, args.format == "markdown"))
