"""`trace-tui diff BASE NEW`: what changed from BASE to NEW, and the CI regression gate."""

from __future__ import annotations

import argparse
import sys

from tui.commands.cluster import NOT_A_RANK_SET, add_cluster_flag
from tui.commands.command import GATE_FAILED, CommandError, add_format
from tui.commands.loading import load, rank_set
from tui.commands.rank_diff import diff_rank_sets
from tui.commands.trace_args import add_load_flags
from tui.model.analysis.diff import HEADLINE, diff, regressed
from tui.model.errors import TraceError
from tui.model.ingest.formats import check_start
from tui.model.ingest.rank_folder import RankFiles
from tui.model.present.diff_report import (
    KERNEL_SORTS,
    OP_SORTS,
    REGION_SORTS,
    as_json,
    as_text,
    drivers,
    headline_label,
)
from tui.model.present.diff_report import as_csv as csv_tables
from tui.model.present.render.csv import as_csv
from tui.model.text import printable


class DiffCommand:
    name = "diff"
    help = "compare two traces"
    description = (
        "Compare NEW with BASE: step time (median step), GPU busy, idle by cause, "
        "communication and the verdict; the op, kernel and region tables by the largest change. "
        "Two folders of rank traces: each rank's step, GPU busy and communication, the ranks "
        "that regressed most and the stragglers; the gate watches the slowest rank's step."
    )

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("base", help="the trace (or folder of rank traces) to compare against")
        parser.add_argument("new", help="the trace (or folder of rank traces) compared with it")
        add_format(parser)
        parser.add_argument(
            "--sort",
            help=f"rank rows by the change of: ops {', '.join(OP_SORTS)} (default self_cuda, or "
            f"self_cpu without GPU work); kernels {', '.join(KERNEL_SORTS)}; regions "
            f"{', '.join(REGION_SORTS)}",
        )
        parser.add_argument("--top", type=int, default=20, help="rows of each table (0: all)")
        parser.add_argument(
            "--fail-on-regression",
            type=float,
            metavar="PCT",
            help="exit 3 when the metric grew by more than PCT percent",
        )
        parser.add_argument(
            "--metric",
            choices=tuple(HEADLINE),
            default="step",
            help="what --fail-on-regression watches (default step: the median step)",
        )
        add_load_flags(parser)
        add_cluster_flag(parser)

    def run(self, args: argparse.Namespace) -> int:
        sorts = {*OP_SORTS, *KERNEL_SORTS, *REGION_SORTS}
        if args.sort is not None and args.sort not in sorts:
            raise CommandError(f"--sort {args.sort}: choose one of {', '.join(sorted(sorts))}", 2)
        if args.top < 0:
            raise CommandError("--top must be 0 or more", 2)
        gate = args.fail_on_regression
        if gate is not None and not gate >= 0:  # NaN too: it would pass every comparison
            raise CommandError("--fail-on-regression must be 0 or more (a percent of growth)", 2)
        base_set, new_set = (_rank_set(path) for path in (args.base, args.new))
        if (base_set is None) != (new_set is None):
            try:  # the other one may be no trace at all: say that first
                check_start(args.new if base_set is not None else args.base)
            except TraceError as e:
                raise CommandError(str(e)) from e
            raise CommandError(
                "compare a rank folder with a rank folder, or a trace with a trace: "
                f"{printable(args.base if base_set else args.new)} is a folder of rank traces",
                2,
            )
        if base_set is not None and new_set is not None:
            return diff_rank_sets(base_set, new_set, args)
        if args.cluster is not None:
            raise CommandError(NOT_A_RANK_SET, 2)
        result = diff(load(args, args.base), load(args, args.new))
        if args.format == "csv":
            sys.stdout.write(as_csv(csv_tables(result, args.sort, args.top)))
        elif args.format == "json":
            sys.stdout.buffer.write(as_json(result, args.sort, args.top))
        else:
            sys.stdout.write(as_text(result, args.sort, args.top, args.format == "markdown"))
        if gate is None:
            return 0
        metric = args.metric
        if result.base.metric(metric) is None or result.new.metric(metric) is None:
            raise CommandError(
                f"--metric {metric}: not in both traces (a step metric needs ProfilerStep)"
            )
        change = regressed(result, metric, gate)
        if change is None:
            return 0
        rows = "; ".join(drivers(result, metric)) or "no op grew"
        grew = f"{headline_label(metric)} regressed {change:.1f}% (over {gate:g}%)"
        raise CommandError(f"{grew}: most grown: {rows}", GATE_FAILED)


def _rank_set(path: str) -> RankFiles | None:
    """The rank set a folder holds (None: a trace, or a folder taken for its newest trace)."""
    ranks, _ = rank_set(path)
    return ranks
