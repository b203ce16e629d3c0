"""Command line: `trace-tui [FILE|FOLDER]`, `trace-tui info FILE [--json]`, `trace-tui summary`,
`trace-tui diff BASE NEW`, `--list FOLDER`."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from tui.model.analysis.call_tree import VIEWS as TREE_VIEWS
from tui.model.analysis.call_tree import tree_for
from tui.model.analysis.diff import HEADLINE, diff, regressed
from tui.model.analysis.graphs import graphs
from tui.model.analysis.rank_compare import compare
from tui.model.analysis.rank_stats import RankStats
from tui.model.analysis.roofline import roofline
from tui.model.analysis.scope import Scope
from tui.model.analysis.steps import step_windows
from tui.model.errors import TraceError
from tui.model.ingest import load_trace
from tui.model.ingest.cache import ModelCache
from tui.model.ingest.footprint import available_memory, estimate_memory
from tui.model.ingest.rank_folder import RankFiles, rank_files
from tui.model.ingest.source import check_start, max_stream_bytes, no_traces_reason, scan_folder
from tui.model.present.diff_report import (
    KERNEL_SORTS,
    OP_SORTS,
    REGION_SORTS,
    drivers,
    headline_label,
)
from tui.model.present.diff_report import as_csv as diff_csv
from tui.model.present.diff_report import as_json as diff_json
from tui.model.present.diff_report import as_text as diff_text
from tui.model.present.graph_report import as_csv as graph_csv
from tui.model.present.graph_report import as_json as graph_json
from tui.model.present.graph_report import as_text as graph_text
from tui.model.present.info import report, summary
from tui.model.present.rank_pass import RankFailed, summarise_ranks
from tui.model.present.render.csv import as_csv
from tui.model.present.report import as_csv as summary_csv
from tui.model.present.report import as_json, as_text
from tui.model.present.roofline_report import (
    NO_SHAPES,
    headline_json,
    summary_roofline,
    verdict_note,
)
from tui.model.present.roofline_report import as_csv as roofline_csv
from tui.model.present.roofline_report import as_json as roofline_json
from tui.model.present.roofline_report import as_text as roofline_text
from tui.model.present.roofline_report import (
    note as roof_note,
)
from tui.model.present.tables import KERNELS, OPS, SHAPES, WORK_SORTS, scope_report, table_for
from tui.model.present.tree_report import as_csv as tree_csv
from tui.model.present.tree_report import as_json as tree_json
from tui.model.present.tree_report import as_text as tree_text
from tui.model.text import printable
from tui.model.trace import Trace

if TYPE_CHECKING:
    from tui.app import TraceApp

TREE_MIN_SHARE = 0.01  # --tree leaves out nodes under 1% of the root (counted)
TREE_DEFAULTS = {"weight": None, "view": "top-down", "depth": 12}
TOP_DEFAULT = 20  # rows of a table
# What summary's table flags are when not given (a view that lists its own rows refuses them).
UNSET: dict[str, object] = {
    "kernels": False,
    "by_shape": False,
    "sort": None,
    "top": TOP_DEFAULT,
    "step": None,
}
PROG = "trace-tui"
# The trace opened when no file is named: one our own backend made, shipped in the package.
SAMPLES = Path(__file__).resolve().parent / "samples"
DEFAULT_SAMPLE = "transformer_128_cpu.pt.trace.json.gz"


def default_sample() -> Path:
    """The bundled sample trace (in the wheel, so any install opens it)."""
    return SAMPLES / DEFAULT_SAMPLE


def make_app(
    path: str | Path,
    cache: ModelCache | None = None,
    shown_as: str | None = None,
    workers: int | None = None,
    new: str | Path | None = None,
) -> TraceApp:
    """The viewer for one trace, for a folder of one job's rank traces (its rank table), or for
    two traces to compare, BASE `path` and `new` (tests drive this with Pilot)."""
    from tui.app import TraceApp

    if new is not None:
        return TraceApp(str(path), cache, shown_as, None, workers, None, str(new))
    ranks, notice = rank_set(str(path))
    return TraceApp(str(path), cache, shown_as, ranks, workers, notice)


def _cache(opts: argparse.Namespace) -> ModelCache | None:
    return None if opts.no_cache else ModelCache()


def _fail(message: str, code: int = 1) -> int:
    print(f"{PROG}: {printable(message)}", file=sys.stderr)
    return code


def _view_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="View a PyTorch profiler (Chrome format) trace in the terminal.",
        epilog="Also: trace-tui info FILE [--json] prints what was loaded; trace-tui summary "
        "FILE [--format text|markdown|json] gives the verdict and the op table; trace-tui diff "
        "BASE NEW compares two traces.",
    )
    parser.add_argument(
        "path",
        nargs="?",
        help="trace file (.json, .json.gz) or a "
        "tensorboard_trace_handler folder; default: a bundled sample",
    )
    parser.add_argument(
        "new",
        nargs="?",
        help="a second trace: both open, o switches between them and D shows what changed",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the traces in the folder, newest first, and exit"
    )
    _common(parser)
    return parser


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="load from the file even if its model is cached, and cache nothing",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="load even when the trace may need more memory than is free",
    )
    parser.add_argument(
        "--workers",
        type=_positive,
        help="processes that read a folder of rank traces, or one big trace (default: one "
        "per core, or TRACE_TUI_WORKERS; small sets and files under 128 MB use one)",
    )


def _info_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"{PROG} info", description="Print what a trace holds, as loaded."
    )
    parser.add_argument("path", nargs="?", help="trace file or folder; default: the bundled sample")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    _common(parser)
    return parser


def _summary_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"{PROG} summary",
        description="The verdict (communication-, compute-, data-loading-, sync- or "
        "overhead-bound, mixed, no GPU activity) with its evidence, and the top rows of the op "
        "table (like key_averages) or the kernel table.",
    )
    parser.add_argument("path", nargs="?", help="trace file or folder; default: the bundled sample")
    parser.add_argument("--format", choices=("text", "markdown", "json", "csv"), default="text")
    parser.add_argument(
        "--sort",
        help=f"ops: {', '.join(OPS.sort_keys)} (default {OPS.default_sort}), with --by-shape "
        f"also {', '.join(k for k in SHAPES.sort_keys if k not in OPS.sort_keys)}; kernels: "
        f"{', '.join(KERNELS.sort_keys)} (default {KERNELS.default_sort})",
    )
    parser.add_argument(
        "--top", type=int, default=TOP_DEFAULT, help="rows of the table (default 20; 0: all)"
    )
    parser.add_argument("--step", type=_step_number, help="only ProfilerStep#N (N, or its name)")
    parser.add_argument("--kernels", action="store_true", help="the kernel table, not the ops")
    parser.add_argument(
        "--by-shape",
        action="store_true",
        help="the op table by name and input shapes, as key_averages(group_by_input_shape=True), "
        "with each call's least and most time",
    )
    parser.add_argument(
        "--roofline",
        action="store_true",
        help="FLOPs, bytes, achieved TFLOP/s and TB/s and %% of the device's peak, by op and "
        "input shapes (needs record_shapes=True)",
    )
    parser.add_argument(
        "--tree",
        action="store_true",
        help="where the time goes as a call tree (Python frames, modules, annotations, ops)",
    )
    parser.add_argument(
        "--weight",
        choices=("cpu", "gpu"),
        help="--tree by CPU time or by the GPU time of the ops under each node (default: gpu "
        "when the trace has GPU work)",
    )
    parser.add_argument(
        "--view",
        choices=TREE_VIEWS,
        default=TREE_DEFAULTS["view"],
        help="--tree: callers to callees, each frame's callers by its self time, only "
        "nn.Module frames, or those with a class's instances merged",
    )
    parser.add_argument(
        "--depth",
        type=int,
        default=TREE_DEFAULTS["depth"],
        help="--tree: levels shown (default 12)",
    )
    parser.add_argument(
        "--graphs",
        action="store_true",
        help="the CUDA/HIP graphs replayed, each with its kernels per graph node (--top: nodes "
        "per graph)",
    )
    parser.add_argument(
        "--peaks",
        metavar="SPEC",
        help="the device's dense peaks, e.g. bf16=989,fp32=67,hbm=3.35 (TFLOP/s, TB/s); "
        "default: the table's for the trace's device, or TRACE_TUI_PEAKS",
    )
    _common(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:
        # The reader went away (`trace-tui info FILE | head`): end quietly, as `cat` does. Point
        # stdout at nothing so that the interpreter's own flush at exit cannot fail again.
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        return 0


def _main(args: list[str]) -> int:
    if args and args[0] == "info":
        return _info(args[1:])
    if args and args[0] == "summary":
        return _summary(args[1:])
    if args and args[0] == "diff":
        return _diff(args[1:])
    try:
        opts = _view_parser().parse_args(args)
    except SystemExit as e:
        return int(e.code or 0)
    path = opts.path or str(default_sample())
    if opts.list:
        return _list(path)
    shown_as = None
    if path == "-":
        spooled = _spool_stdin()
        if isinstance(spooled, int):
            return spooled
        path, shown_as = spooled, "standard input"
    try:
        check_start(path)  # cheap checks before the terminal is taken over
        if opts.new is not None:
            check_start(opts.new)
    except TraceError as e:
        return _fail(str(e))
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _fail("the viewer needs a terminal; for text output use: trace-tui info FILE", 2)
    if not _enough_memory(path, opts, ask=True):
        return 1
    app = make_app(path, _cache(opts), shown_as, opts.workers, opts.new)
    app.run()
    if app.load_error is not None:
        return _fail(app.load_error)
    return app.return_code or 0


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a number of 1 or more: {text!r}")
    return int(text)


def _step_number(text: str) -> int:
    """`--step 7` or `--step ProfilerStep#7`."""
    number = text.removeprefix("ProfilerStep#")
    if not number.isdigit():
        raise argparse.ArgumentTypeError(f"not a step number: {text!r} (7, or ProfilerStep#7)")
    return int(number)


def _info(args: list[str]) -> int:
    try:
        opts = _info_parser().parse_args(args)
    except SystemExit as e:
        return int(e.code or 0)
    trace = _load(opts)
    if trace is None:
        return 1
    info = summary(trace)
    if opts.json:
        sys.stdout.buffer.write(
            orjson.dumps(info, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
        )
        sys.stdout.buffer.write(b"\n")
    else:
        print(report(info))
    return 0


def _summary(args: list[str]) -> int:
    try:
        opts = _summary_parser().parse_args(args)
    except SystemExit as e:
        return int(e.code or 0)
    if opts.kernels and opts.by_shape:
        return _fail("--by-shape groups the op table: not with --kernels", 2)
    views = [v for v in ("roofline", "graphs", "tree") if getattr(opts, v)]
    if len(views) > 1:
        return _fail(f"--{views[0]} and --{views[1]}: one view at a time", 2)
    for view in views:
        # A step's tree is --step N; the roofline and the graphs take --top, the tree --depth.
        flags = ("kernels", "by_shape", "sort", "top" if view == "tree" else "step")
        clash = [f for f in flags if getattr(opts, f) != UNSET[f]]
        if clash:
            names = ", ".join("--" + f.replace("_", "-") for f in clash)
            return _fail(f"--{view} lists its own rows: not with {names}", 2)
    loose = [f for f in ("weight", "view", "depth") if getattr(opts, f) != TREE_DEFAULTS[f]]
    if loose and not opts.tree:
        return _fail(f"--{loose[0]} shapes --tree's output: add --tree", 2)
    table = table_for(opts.kernels, opts.by_shape)
    sort = opts.sort or table.default_sort
    if sort not in table.sort_keys:
        return _fail(f"--sort {sort}: choose one of {', '.join(table.sort_keys)}", 2)
    if opts.top < 0:
        return _fail("--top must be 0 or more", 2)
    ranks, why = rank_set(opts.path)
    if why is not None:
        print(f"{PROG}: {why}", file=sys.stderr)
    if ranks is not None:
        return _rank_summary(ranks, opts)
    trace = _load(opts)
    if trace is None:
        return 1
    if opts.roofline:
        return _roofline(trace, opts)
    if opts.graphs:
        found = graphs(trace)
        if opts.format == "csv":
            sys.stdout.write(as_csv(graph_csv(trace, found, opts.top)))
        elif opts.format == "json":
            sys.stdout.buffer.write(graph_json(trace, found, opts.top))
        else:
            sys.stdout.write(graph_text(trace, found, opts.top, opts.format == "markdown"))
        return 0
    scope = Scope()  # the whole trace, as key_averages() counts it
    if opts.step is not None:
        steps = {name: (a, b) for name, a, b in step_windows(trace)}
        window = steps.get(f"ProfilerStep#{opts.step}")
        if window is None:
            known = ", ".join(sorted(steps, key=lambda n: steps[n][0])) or "none"
            return _fail(f"{trace.path}: no ProfilerStep#{opts.step} (steps: {known})")
        scope = Scope(*window)
    if opts.tree:
        return _tree(trace, opts, scope)
    try:
        line, roof = summary_roofline(trace, opts.peaks)
    except ValueError as e:
        return _fail(f"--peaks: {e}", 2)
    result = scope_report(trace, scope, opts.kernels, sort, roof, opts.by_shape)
    if sort in WORK_SORTS and not any(c.key == sort for c in result.columns):
        why = (roof_note(roof) if roof is not None else line) or NO_SHAPES
        return _fail(f"--sort {sort}: {why}", 2)
    if opts.step is not None:  # the line is the whole trace's (a step's: --roofline's JSON)
        line, roof = None, None
    if opts.format == "csv":
        sys.stdout.write(as_csv(summary_csv(result, opts.top)))
        return 0
    if opts.format == "json":
        extra = headline_json(trace, roof) if roof is not None and roof.shapes_recorded else None
        sys.stdout.buffer.write(as_json(trace.path, result, opts.top, extra))
        return 0
    step = f"ProfilerStep#{opts.step}" if opts.step is not None else None
    note = verdict_note(result.summary.verdict.label, roof)
    markdown = opts.format == "markdown"
    sys.stdout.write(as_text(trace.path, result, opts.top, markdown, step, line, note))
    return 0


def _diff_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"{PROG} diff",
        description="Compare NEW with BASE: step time (median step), GPU busy, idle by cause, "
        "communication and the verdict; the op, kernel and region tables by the largest change.",
    )
    parser.add_argument("base", help="the trace to compare against")
    parser.add_argument("new", help="the trace compared with it")
    parser.add_argument("--format", choices=("text", "markdown", "json", "csv"), default="text")
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
    _common(parser)
    return parser


def _diff(args: list[str]) -> int:
    try:
        opts = _diff_parser().parse_args(args)
    except SystemExit as e:
        return int(e.code or 0)
    sorts = {*OP_SORTS, *KERNEL_SORTS, *REGION_SORTS}
    if opts.sort is not None and opts.sort not in sorts:
        return _fail(f"--sort {opts.sort}: choose one of {', '.join(sorted(sorts))}", 2)
    if opts.top < 0:
        return _fail("--top must be 0 or more", 2)
    if opts.fail_on_regression is not None and opts.fail_on_regression < 0:
        return _fail("--fail-on-regression must be 0 or more (a percent of growth)", 2)
    traces = []
    for path in (opts.base, opts.new):
        opts.path = path
        trace = _load(opts)
        if trace is None:
            return 1
        traces.append(trace)
    result = diff(*traces)
    if opts.format == "csv":
        sys.stdout.write(as_csv(diff_csv(result, opts.sort, opts.top)))
    elif opts.format == "json":
        sys.stdout.buffer.write(diff_json(result, opts.sort, opts.top))
    else:
        sys.stdout.write(diff_text(result, opts.sort, opts.top, opts.format == "markdown"))
    if opts.fail_on_regression is None:
        return 0
    metric = opts.metric
    if result.base.metric(metric) is None or result.new.metric(metric) is None:
        return _fail(f"--metric {metric}: not in both traces (a step metric needs ProfilerStep)")
    change = regressed(result, metric, opts.fail_on_regression)
    if change is None:
        return 0
    rows = "; ".join(drivers(result, metric)) or "no op grew"
    _fail(
        f"{headline_label(metric)} regressed {change:.1f}% (over {opts.fail_on_regression:g}%): "
        f"most grown: {rows}"
    )
    return 3


def _tree(trace: Trace, opts: argparse.Namespace, scope: Scope) -> int:
    if opts.depth < 1:
        return _fail("--depth must be 1 or more", 2)
    weight = opts.weight or ("gpu" if trace.kind_mask("gpu").any() else "cpu")
    tree = tree_for(trace, opts.view, scope, weight)
    if opts.format == "csv":
        sys.stdout.write(as_csv(tree_csv(trace, tree, opts.view, opts.depth, TREE_MIN_SHARE)))
    elif opts.format == "json":
        sys.stdout.buffer.write(tree_json(trace, tree, opts.view, opts.depth, TREE_MIN_SHARE))
    else:
        markdown = opts.format == "markdown"
        text = tree_text(trace, tree, opts.view, opts.depth, TREE_MIN_SHARE, markdown)
        sys.stdout.write(text)
    return 0


def _roofline(trace: Trace, opts: argparse.Namespace) -> int:
    try:
        result = roofline(trace, opts.peaks)
    except ValueError as e:
        return _fail(f"--peaks: {e}", 2)
    if opts.format == "csv":
        sys.stdout.write(as_csv(roofline_csv(result, opts.top)))
    elif opts.format == "json":
        sys.stdout.buffer.write(roofline_json(trace, result, opts.top))
    else:
        sys.stdout.write(roofline_text(trace, result, opts.top, opts.format == "markdown"))
    return 0


def rank_set(path: str | None) -> tuple[RankFiles | None, str | None]:
    """(the rank set a folder holds, None); (None, why not) for a folder of several jobs;
    (None, None) for anything else."""
    if path is None or not Path(path).is_dir():
        return None, None
    ranks = rank_files(path)
    if ranks is not None and ranks.mixed is not None:
        why = f"{printable(path)}: {ranks.mixed}: not compared as ranks; the newest trace is used"
        return None, why
    return ranks, None


def _rank_summary(ranks: RankFiles, opts: argparse.Namespace) -> int:
    """`summary DIR` on a rank set: the rank table and the collectives that waited longest."""
    from tui.model.present import rank_report

    results = summarise_ranks(ranks, opts.workers, use_cache=not opts.no_cache)
    stats = [r for r in results if isinstance(r, RankStats)]
    failed = [r for r in results if isinstance(r, RankFailed)]
    if len(stats) < 2:
        for f in failed:
            _fail(f.error)
        return _fail(f"{ranks.folder}: fewer than two ranks could be read")
    report = compare(stats)
    report.notes[:0] = ranks.notes()
    top = opts.top
    if opts.format == "csv":
        sys.stdout.write(as_csv(rank_report.as_csv(report, top)))
    elif opts.format == "json":
        sys.stdout.buffer.write(rank_report.as_json(ranks.folder, report, failed, top))
    else:
        markdown = opts.format == "markdown"
        sys.stdout.write(rank_report.as_text(ranks.folder, report, failed, top, markdown))
    return 0


def _spool_stdin() -> str | int:
    """`zcat t.json.gz | trace-tui -`: keep the piped trace in a temporary file, then take the
    keyboard from the terminal, since standard input was the pipe."""
    fd, name = tempfile.mkstemp(prefix="trace-tui-stdin-", suffix=".json")
    atexit.register(os.unlink, name)
    limit, copied = max_stream_bytes(), 0
    with os.fdopen(fd, "wb") as out:  # as it came (gzip or not): the loader reads it as a file
        while block := sys.stdin.buffer.read(1 << 20):
            copied += len(block)
            if copied > limit:
                return _fail(
                    f"<stdin>: stopped reading after {limit:,} bytes; set "
                    "TRACE_TUI_MAX_BYTES to read more from a pipe"
                )
            out.write(block)
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        return _fail("the viewer needs a terminal for its keys; for text use: trace-tui info -", 2)
    os.dup2(tty, 0)
    os.close(tty)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 (fd 0, now the terminal)
    return name


def _load(opts: argparse.Namespace) -> Trace | None:
    """Load for a headless command: errors become one line (and None)."""
    if opts.path is None:
        opts.path = str(default_sample())
    try:
        check_start(opts.path)
        if not _enough_memory(opts.path, opts, ask=False):
            return None
        return load_trace(opts.path, cache=_cache(opts), workers=opts.workers)
    except TraceError as e:
        _fail(str(e))
        return None


def _enough_memory(path: str, opts: argparse.Namespace, ask: bool) -> bool:
    """Warn before a load likely to need more memory than is free; the viewer asks first."""
    need, free = (0 if path == "-" else estimate_memory(path)), available_memory()
    if opts.yes or free is None or need <= free:
        return True
    print(
        f"{PROG}: warning: loading {printable(path)} may need about {need / 2**30:.1f} GiB "
        f"of memory; {free / 2**30:.1f} GiB is free",
        file=sys.stderr,
    )
    if not ask or not sys.stdin.isatty():
        return True
    answer = input("Load it anyway? [y/N] ").strip().lower()
    return answer in ("y", "yes")


def _list(path: str) -> int:
    if not Path(path).is_dir():
        return _fail(f"{path}: --list needs a folder", 2)
    traces, others = scan_folder(path)
    if not traces:
        return _fail(f"{path}: {no_traces_reason(others)}")
    for i, trace in enumerate(traces):
        print(printable(str(trace)) + ("  (newest, opened by default)" if i == 0 else ""))
    if others:
        names = ", ".join(printable(p.name) for p in others)
        print(f"{PROG}: skipped {len(others)} that are not traces: {names}", file=sys.stderr)
    return 0
