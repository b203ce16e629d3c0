"""`trace-tui info FILE [--json]`: what a trace holds, as loaded."""

from __future__ import annotations

import argparse
import sys

from tui.commands.trace_args import add_load_flags, add_path_or_sample, chosen_headless
from tui.model.ingest.cache_folder import CacheFolder
from tui.model.passes.kept_info import kept_info
from tui.model.present.info import report, summary
from tui.model.present.render.json import dumps


class InfoCommand:
    name = "info"
    help = "print what a trace holds, as loaded"
    description = "Print what a trace holds, as loaded."

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        add_path_or_sample(parser, "trace file or folder")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        add_load_flags(parser)

    def run(self, args: argparse.Namespace) -> int:
        path = chosen_headless(args)
        # A trace `info` has seen before is answered from its cache without loading the model.
        info = None if args.no_cache else kept_info(path, CacheFolder())
        if info is None:
            from tui.commands.loading import load  # imports the model: not for a cached trace

            info = summary(load(args, path))
        if args.json:
            sys.stdout.buffer.write(dumps(info))
        else:
            print(report(info))
        return 0
