"""`trace-tui summary [FILE|FOLDER]`: its flags, the rules between them that argparse cannot
declare, and which view shows the trace."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

import msgspec

from tui.commands.cluster import NOT_A_RANK_SET, add_cluster_flag
from tui.commands.command import CommandError, add_format, warn
from tui.commands.loading import load, rank_set
from tui.commands.summary.capture import capture_trace
from tui.commands.trace_args import (
    add_interval_flag,
    add_load_flags,
    add_path_or_sample,
    chosen_headless,
)
from tui.model.analysis.call_tree import VIEWS as TREE_VIEWS
from tui.model.analysis.scope import Scope
from tui.model.analysis.steps import step_windows

# The tables' specs alone: present/tables.py would import every analysis a rank set's summary
# does not run.
from tui.model.present.kernel_table import KERNELS
from tui.model.present.op_table import OPS, SHAPES, table_for
from tui.model.trace import Trace

# The defaults of the flags the rules below read: a flag is "given" when it differs from these.
DEFAULTS: dict[str, object] = {
    "sort": None,
    "top": 20,  # rows of a table
    "step": None,
    "weight": None,
    "view": "top-down",
    "depth": 12,
    "python_frames": False,
}


class View(msgspec.Struct, frozen=True):
    """A view that lists its own rows instead of the op table: how it shows a trace (the whole
    trace, or the step's scope), and the table flags it refuses."""

    show: Callable[[Trace, argparse.Namespace, Scope], None]
    refuses: tuple[str, ...]


def _view_of(module: str) -> Callable[[Trace, argparse.Namespace, Scope], None]:
    """A view's `show`, its module imported when it runs: the table is what most runs show,
    and a start-up that imports every view is a tenth of a small trace's summary."""

    def show(trace: Trace, args: argparse.Namespace, scope: Scope) -> None:
        found = importlib.import_module(f"tui.commands.summary.{module}")
        found.show(trace, args, scope)

    return show


# Keyed by the flag that picks the view (one at a time: argparse's mutually exclusive group).
# The roofline and the graphs take --top (rows, nodes per graph); a step's tree is --step N,
# and the tree's rows are --depth.
VIEWS = {
    "roofline": View(_view_of("roofline"), ("sort", "step", "python_frames")),
    "graphs": View(_view_of("graphs"), ("sort", "step", "python_frames")),
    "tree": View(_view_of("tree"), ("sort", "top", "python_frames")),
}
TREE_FLAGS = ("weight", "view", "depth")  # they shape --tree's output: refused without it


class SummaryCommand:
    name = "summary"
    help = "the verdict and the op table, or one of its views, as text, Markdown or JSON"
    description = (
        "The verdict (communication-, compute-, data-loading-, sync-, copy- or overhead-bound, "
        "mixed, no GPU activity) with its evidence, and the top rows of the op table (like "
        "key_averages) or the kernel table."
    )

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        parser.set_defaults(**DEFAULTS)
        add_path_or_sample(parser, "trace file or folder")
        add_format(parser)
        parser.add_argument(
            "--sort",
            help=f"ops: {', '.join(OPS.sort_keys)} (default self_cuda, or self_cpu without GPU "
            "work), with --by-shape "
            f"also {', '.join(k for k in SHAPES.sort_keys if k not in OPS.sort_keys)}; kernels: "
            f"{', '.join(KERNELS.sort_keys)} (default {KERNELS.default_sort})",
        )
        parser.add_argument(
            "--top", type=int, help=f"rows of the table (default {DEFAULTS['top']}; 0: all)"
        )
        parser.add_argument(
            "--step", type=_step_number, help="only ProfilerStep#N (N, or its name)"
        )
        parser.add_argument(
            "--python-frames",
            action="store_true",
            help="list the op table's Python-frame rows (with_stack=True traces), which by "
            "default are counted under the table but not listed; the totals are the same",
        )
        shown = parser.add_mutually_exclusive_group()  # one table or view at a time
        shown.add_argument("--kernels", action="store_true", help="the kernel table, not the ops")
        shown.add_argument(
            "--by-shape",
            action="store_true",
            help="the op table by name and input shapes, as "
            "key_averages(group_by_input_shape=True), with each call's least and most time",
        )
        shown.add_argument(
            "--roofline",
            action="store_true",
            help="FLOPs, bytes, achieved TFLOP/s and TB/s and %% of the device's peak, by op "
            "and input shapes (needs record_shapes=True)",
        )
        shown.add_argument(
            "--tree",
            action="store_true",
            help="where the time goes as a call tree (Python frames, modules, annotations, ops)",
        )
        shown.add_argument(
            "--graphs",
            action="store_true",
            help="the CUDA/HIP graphs replayed, each with its kernels per graph node (--top: "
            "nodes per graph)",
        )
        parser.add_argument(
            "--weight",
            choices=("cpu", "gpu"),
            help="--tree by CPU time or by the GPU time of the ops under each node (default: "
            "gpu when the trace has GPU work)",
        )
        parser.add_argument(
            "--view",
            choices=TREE_VIEWS,
            help="--tree: callers to callees, each frame's callers by its self time, only "
            "nn.Module frames, or those with a class's instances merged",
        )
        parser.add_argument(
            "--depth", type=int, help=f"--tree: levels shown (default {DEFAULTS['depth']})"
        )
        parser.add_argument(
            "--peaks",
            metavar="SPEC",
            help="the device's dense peaks, e.g. bf16=989,fp32=67,hbm=3.35 (TFLOP/s, TB/s); "
            "default: the table's for the trace's device, or TRACE_TUI_PEAKS",
        )
        parser.add_argument(
            "--capture",
            metavar="PATH",
            help="the trace of the graph-capture phase (or TraceLens's execution_details.json "
            "naming it): graph replays take the FLOPs and bytes of the ops it captured",
        )
        parser.add_argument(
            "--follow",
            action="store_true",
            help="a folder a running job writes traces into: one line per trace (the newest, "
            "then each new one once complete: steps, median step, GPU busy, verdict) until "
            "ctrl+c",
        )
        add_interval_flag(parser)
        add_load_flags(parser)
        add_cluster_flag(parser)

    def run(self, args: argparse.Namespace) -> int:
        view = _checked_view(args)
        path = chosen_headless(args)
        if args.follow:
            given = _not_followed(args)
            if given:
                raise CommandError(
                    "--follow prints one line per trace (--format json: one JSON object a "
                    f"line): not with {', '.join(given)}",
                    2,
                )
            from tui.commands.summary.follow import follow

            return follow(path, args)
        found, why = rank_set(path)
        if why is not None:
            warn(why)
        if found is not None:
            if args.capture is not None:
                raise CommandError("--capture reads one trace's graph replays: not a rank set", 2)
            from tui.commands.summary import ranks  # the rank pass, for a folder of ranks

            ranks.show(found, args)
            return 0
        if args.cluster is not None:
            raise CommandError(NOT_A_RANK_SET, 2)
        trace = load(args, path)
        # Only the op table's Roofline line and --roofline read the capture.
        uses = view is None or view is VIEWS["roofline"]
        args.capture_trace = capture_trace(args) if uses else None
        scope = Scope() if args.step is None else _step_scope(trace, args.step)
        if view is None:
            # The table's module is imported here: a rank set's summary never shows it.
            from tui.commands.summary import table

            table.show(trace, args, scope)
        else:
            view.show(trace, args, scope)
        return 0


def _not_followed(args: argparse.Namespace) -> list[str]:
    """The flags given that --follow's one line per trace has no room for."""
    tables = ("kernels", "by_shape", *VIEWS)
    given = [name for name in tables if getattr(args, name)]
    given += [name for name in DEFAULTS if getattr(args, name) != DEFAULTS[name]]
    given += [name for name in ("capture", "peaks", "cluster") if getattr(args, name) is not None]
    flags = [f"--{name.replace('_', '-')}" for name in given]
    return flags + ([f"--format {args.format}"] if args.format in ("markdown", "csv") else [])


def _checked_view(args: argparse.Namespace) -> View | None:
    """The view asked for (None: the table), once the flags agree; else a usage error."""
    picked = [name for name in VIEWS if getattr(args, name)]
    view = VIEWS[picked[0]] if picked else None
    if view is not None:
        given = [f for f in view.refuses if getattr(args, f) != DEFAULTS[f]]
        if given:
            names = ", ".join("--" + f.replace("_", "-") for f in given)
            raise CommandError(f"--{picked[0]} lists its own rows: not with {names}", 2)
    loose = [f for f in TREE_FLAGS if getattr(args, f) != DEFAULTS[f]]
    if loose and not args.tree:
        raise CommandError(f"--{loose[0]} shapes --tree's output: add --tree", 2)
    if args.kernels and args.python_frames:
        raise CommandError("--python-frames lists rows of the op table: not with --kernels", 2)
    table = table_for(args.kernels, args.by_shape)
    if args.sort is not None and args.sort not in table.sort_keys:
        raise CommandError(f"--sort {args.sort}: choose one of {', '.join(table.sort_keys)}", 2)
    if args.top < 0:
        raise CommandError("--top must be 0 or more", 2)
    if args.depth < 1:
        raise CommandError("--depth must be 1 or more", 2)
    return view


def _step_number(text: str) -> int:
    """`--step 7` or `--step ProfilerStep#7`."""
    number = text.removeprefix("ProfilerStep#")
    if not number.isdigit():
        raise argparse.ArgumentTypeError(f"not a step number: {text!r} (7, or ProfilerStep#7)")
    return int(number)


def _step_scope(trace: Trace, step: int) -> Scope:
    """The window of ProfilerStep#`step`, as key_averages() counts a step."""
    steps = {name: (a, b) for name, a, b in step_windows(trace)}
    window = steps.get(f"ProfilerStep#{step}")
    if window is None:
        known = ", ".join(sorted(steps, key=lambda n: steps[n][0])) or "none"
        raise CommandError(f"{trace.path}: no ProfilerStep#{step} (steps: {known})")
    return Scope(*window)
