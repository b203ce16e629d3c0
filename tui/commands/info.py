"""`trace-tui info FILE [--json]`: what a trace holds, as loaded."""

from __future__ import annotations

import argparse
import sys

import orjson

from tui.commands.loading import add_load_flags, add_path_or_sample, chosen_headless, load
from tui.model.present.info import report, summary


class InfoCommand:
    name = "info"
    help = "print what a trace holds, as loaded"
    description = "Print what a trace holds, as loaded."

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        add_path_or_sample(parser, "trace file or folder")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        add_load_flags(parser)

    def run(self, args: argparse.Namespace) -> int:
        info = summary(load(args, chosen_headless(args)))
        if args.json:
            sys.stdout.buffer.write(
                orjson.dumps(info, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
            )
            sys.stdout.buffer.write(b"\n")
        else:
            print(report(info))
        return 0
