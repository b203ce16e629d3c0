"""`trace-tui info FILE [--json]`: what a trace holds, as loaded."""

from __future__ import annotations

import argparse
import sys

import orjson

from tui.commands.loading import add_load_flags, load
from tui.model.present.info import report, summary


class InfoCommand:
    name = "info"
    help = "print what a trace holds, as loaded"
    description = "Print what a trace holds, as loaded."

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "path", nargs="?", help="trace file or folder; default: the bundled sample"
        )
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        add_load_flags(parser)

    def run(self, args: argparse.Namespace) -> int:
        info = summary(load(args, args.path))
        if args.json:
            sys.stdout.buffer.write(
                orjson.dumps(info, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
            )
            sys.stdout.buffer.write(b"\n")
        else:
            print(report(info))
        return 0
