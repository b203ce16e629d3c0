"""The default summary view: the verdict with its evidence, then the op table (like
key_averages), the same by input shapes, or the kernel table."""

from __future__ import annotations

import argparse
import sys

from tui.commands.command import CommandError
from tui.model.analysis.scope import Scope
from tui.model.present.render.csv import as_csv
from tui.model.present.report import as_csv as csv_tables
from tui.model.present.report import as_json, as_text
from tui.model.present.roofline_report import (
    NO_SHAPES,
    headline_json,
    note,
    summary_roofline,
    verdict_note,
)
from tui.model.present.tables import WORK_SORTS, scope_report
from tui.model.trace import Trace


def show(trace: Trace, args: argparse.Namespace, scope: Scope) -> None:
    sort: str | None = args.sort  # checked against the table's columns (command.py)
    try:
        line, roof = summary_roofline(trace, args.peaks, args.capture_trace)
    except ValueError as e:
        raise CommandError(f"--peaks: {e}", 2) from e
    result = scope_report(
        trace, scope, args.kernels, sort, roof, args.by_shape, frames=args.python_frames
    )
    if sort in WORK_SORTS and not any(c.key == sort for c in result.columns):
        why = (note(roof) if roof is not None else line) or NO_SHAPES
        raise CommandError(f"--sort {sort}: {why}", 2)
    if args.step is not None:  # the line is the whole trace's (a step's: --roofline's JSON)
        line, roof = None, None
    if args.format == "csv":
        sys.stdout.write(as_csv(csv_tables(result, args.top)))
        return
    if args.format == "json":
        extra = headline_json(trace, roof) if roof is not None and roof.shapes_recorded else None
        sys.stdout.buffer.write(as_json(trace.path, result, args.top, extra))
        return
    step = f"ProfilerStep#{args.step}" if args.step is not None else None
    verdict = verdict_note(result.summary.verdict.label, roof)
    markdown = args.format == "markdown"
    sys.stdout.write(as_text(trace.path, result, args.top, markdown, step, line, verdict))
