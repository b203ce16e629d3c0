"""`summary DIR` on a folder of one job's rank traces: the rank table and the collectives that
waited longest."""

from __future__ import annotations

import argparse
import sys

from tui.commands.cluster import cluster_executor
from tui.commands.command import CommandError, warn
from tui.model.analysis.rank_compare import compare
from tui.model.analysis.rank_stats import RankFailed, RankStats
from tui.model.ingest.rank_folder import RankFiles
from tui.model.passes.ranks import summarise_ranks
from tui.model.present import rank_report
from tui.model.present.render.csv import as_csv


def show(ranks: RankFiles, args: argparse.Namespace) -> None:
    with cluster_executor(args.cluster, ranks) as executor:
        results = summarise_ranks(ranks, args.workers, not args.no_cache, executor)
    stats = [r for r in results if isinstance(r, RankStats)]
    failed = [r for r in results if isinstance(r, RankFailed)]
    if len(stats) < 2:
        for f in failed:
            warn(f.error)
        raise CommandError(f"{ranks.folder}: fewer than two ranks could be read")
    report = compare(stats)
    report.notes[:0] = ranks.notes()
    if args.format == "csv":
        sys.stdout.write(as_csv(rank_report.as_csv(report, args.top)))
    elif args.format == "json":
        sys.stdout.buffer.write(rank_report.as_json(ranks.folder, report, failed, args.top))
    else:
        markdown = args.format == "markdown"
        text = rank_report.as_text(ranks.folder, report, failed, args.top, markdown)
        sys.stdout.write(text)
