"""`trace-tui diff DIR_A DIR_B`: two runs of one job, rank by rank (analysis/rank_diff.py)."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import Executor

from tui.commands.cluster import cluster_executor
from tui.commands.command import GATE_FAILED, CommandError, warn
from tui.model.analysis.rank_compare import RankReport, compare
from tui.model.analysis.rank_diff import rank_set_diff, regressed
from tui.model.analysis.rank_stats import RankFailed, RankStats
from tui.model.ingest.rank_folder import RankFiles
from tui.model.passes.ranks import summarise_ranks
from tui.model.present import rank_diff_report
from tui.model.present.render.csv import as_csv


def diff_rank_sets(base: RankFiles, new: RankFiles, args: argparse.Namespace) -> int:
    if args.sort is not None:
        raise CommandError("--sort: rank sets are listed by the change of each rank's step", 2)
    if args.metric != "step":
        raise CommandError(f"--metric {args.metric}: rank sets are gated on the step only", 2)
    failed: list[tuple[str, RankFailed]] = []
    reports = []
    with cluster_executor(args.cluster, base, new) as executor:
        for side, ranks in (("BASE", base), ("NEW", new)):
            report, lost = _report(ranks, args, executor)
            reports.append(report)
            failed += [(side, f) for f in lost]
    result = rank_set_diff(*reports)
    folders = (base.folder, new.folder)
    if args.format == "csv":
        sys.stdout.write(as_csv(rank_diff_report.as_csv(result, args.top)))
    elif args.format == "json":
        sys.stdout.buffer.write(rank_diff_report.as_json(folders, result, failed, args.top))
    else:
        markdown = args.format == "markdown"
        sys.stdout.write(rank_diff_report.as_text(folders, result, failed, args.top, markdown))
    gate = args.fail_on_regression
    if gate is None:
        return 0
    if result.slowest_change() is None:
        raise CommandError("--fail-on-regression: no rank has ProfilerStep steps on both sides")
    change = regressed(result, gate)
    if change is None:
        return 0
    most = ", ".join(f"rank {r.rank}" for r in result.regressed_most()[:5])
    raise CommandError(
        f"the slowest rank's median step regressed {change:.1f}% (over {gate:g}%): "
        f"most grown: {most}",
        GATE_FAILED,
    )


def _report(
    ranks: RankFiles, args: argparse.Namespace, executor: Executor | None
) -> tuple[RankReport, list[RankFailed]]:
    results = summarise_ranks(ranks, args.workers, not args.no_cache, executor)
    stats = [r for r in results if isinstance(r, RankStats)]
    failed = [r for r in results if isinstance(r, RankFailed)]
    if not stats:
        for f in failed:
            warn(f.error)
        raise CommandError(f"{ranks.folder}: no rank could be read")
    report = compare(stats)
    report.notes[:0] = ranks.notes()
    return report, failed
