"""`summary --tree`: where the time goes as a call tree (Python frames, modules, annotations,
ops), of the whole trace or of one step."""

from __future__ import annotations

import argparse
import sys

from tui.model.analysis.call_tree import tree_for
from tui.model.analysis.scope import Scope
from tui.model.present.render.csv import as_csv
from tui.model.present.tree_report import as_csv as csv_tables
from tui.model.present.tree_report import as_json, as_text
from tui.model.trace import Trace

MIN_SHARE = 0.01  # nodes under 1% of the root are left out (and counted)


def show(trace: Trace, args: argparse.Namespace, scope: Scope) -> None:
    weight = args.weight or ("gpu" if trace.kind_mask("gpu").any() else "cpu")
    tree = tree_for(trace, args.view, scope, weight)
    if args.format == "csv":
        sys.stdout.write(as_csv(csv_tables(trace, tree, args.view, args.depth, MIN_SHARE)))
    elif args.format == "json":
        sys.stdout.buffer.write(as_json(trace, tree, args.view, args.depth, MIN_SHARE))
    else:
        markdown = args.format == "markdown"
        sys.stdout.write(as_text(trace, tree, args.view, args.depth, MIN_SHARE, markdown))
