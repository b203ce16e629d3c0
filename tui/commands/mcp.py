"""`trace-tui mcp`: the analyses served over the Model Context Protocol (stdio), for a coding
agent on the same box, with the official `mcp` SDK (the optional `mcp` extra).

Each tool answers with the JSON the matching command prints (`summary --format json` and its
views, `diff --format json`, `info --json`): it runs that command here and returns what it wrote,
so the two cannot differ. Rows are capped (`top`, at most MAX_ROWS) to keep replies small. A
command's one-line error is the tool's error. Models stay cached between calls (the model cache),
so a second question about a trace does not read it again.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from tui.commands.command import CommandError
from tui.model.analysis.gaps import CAUSES, idle_gaps, largest_first
from tui.model.errors import TraceError
from tui.model.present.details import gap_details, slice_details
from tui.model.text import printable
from tui.model.trace import Trace

MAX_ROWS = 200
MAX_GAPS = 50  # each with its details: 200 would be 200 KB
NAME = "trace-tui"


class McpCommand:
    name = "mcp"
    help = "serve the analyses to coding agents over MCP (stdio)"
    description = (
        "Serve summary, ops, kernels, tree, roofline, graphs, idle gaps, diff, the rank table "
        "and a slice's details as Model Context Protocol tools over stdio (needs the mcp extra: "
        "pip install 'trace-tui[mcp]')."
    )

    def prepare_parser(self, parser: argparse.ArgumentParser) -> None:
        pass

    def run(self, args: argparse.Namespace) -> int:
        server(args).run("stdio")
        return 0


def server(args: argparse.Namespace | None = None) -> Any:
    """The MCP server with every tool registered."""
    try:
        from mcp.server.fastmcp import FastMCP
    except ImportError:
        raise CommandError(
            "mcp needs the Model Context Protocol SDK: pip install 'trace-tui[mcp]'", 2
        ) from None
    mcp = FastMCP(NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    tools = (info, summary, ops, kernels, tree, roofline, graphs, gaps, diff, ranks, slice_at)
    for tool in tools:
        mcp.tool()(tool)
    return mcp


INSTRUCTIONS = (
    "Answers about PyTorch profiler traces (Chrome JSON, .json or .json.gz, or a folder of one "
    "job's rank traces) on this machine. Start with `summary` (the verdict: what bounds the "
    "step, with its evidence and next steps), then `ops`, `kernels`, `tree`, `roofline`; "
    "`diff` compares two traces or two rank folders; `ranks` finds the slow rank. Paths are "
    "this machine's; times are ns from the trace start unless named otherwise."
)


def _rows(top: int) -> str:
    """`top` as the command takes it: 0 (all) and anything larger is MAX_ROWS."""
    if top < 0:
        raise ValueError(f"top {top}: a number of rows, 0 (all, at most {MAX_ROWS}) or more")
    return str(min(top, MAX_ROWS) if top else MAX_ROWS)


# What ops and kernels answer of the summary's JSON: the table, not the verdict around it.
TABLE_KEYS = ("path", "window_ns", "table", "sort", "python_frames_hidden", "rows")


def _table(doc: dict[str, Any]) -> dict[str, Any]:
    return {key: doc[key] for key in TABLE_KEYS}


def _command(name: str, *argv: str) -> Any:
    """Run `trace-tui NAME ARGV` here and return the JSON it printed; its error line (a usage
    error's too) is the tool's error."""
    from tui.commands import COMMANDS

    command = next(c for c in COMMANDS if c.name == name).load()
    parser = argparse.ArgumentParser(prog=f"trace-tui {name}", exit_on_error=False)
    command.prepare_parser(parser)
    out, err = io.BytesIO(), io.StringIO()
    text = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(err):
        try:
            command.run(parser.parse_args(argv))
        except CommandError as e:
            raise ValueError(printable(str(e))) from None
        except argparse.ArgumentError as e:
            raise ValueError(f"trace-tui {name}: {e}") from None
        except SystemExit:  # argparse's other usage errors, said on stderr
            lines = [line for line in err.getvalue().splitlines() if line.strip()]
            raise ValueError(lines[-1] if lines else f"trace-tui {name}: bad arguments") from None
        text.flush()
    return orjson.loads(out.getvalue())


def info(path: str) -> Any:
    """What a trace (or folder) holds, as loaded: its kind, devices, lanes, counts and health.
    Loading caches the model, so later questions about the same file are fast."""
    return _command("info", _path(path), "--json")


def summary(path: str, step: int | None = None, top: int = 10) -> Any:
    """The verdict for the trace (or one ProfilerStep#N with `step`): what bounds it (overhead,
    compute, communication, data loading, syncs, copies) with its evidence, GPU time by kind,
    idle time by cause, every step's verdict, the next steps (recommendations), and the top
    `top` ops. For a folder of rank traces: the rank table (see `ranks`)."""
    extra = () if step is None else ("--step", str(step))
    return _command("summary", _path(path), "--format", "json", "--top", _rows(top), *extra)


def ops(path: str, sort: str | None = None, top: int = 20, by_shape: bool = False) -> Any:
    """The op table, torch's key_averages() rebuilt from the trace (Self CPU, CPU total, Self
    CUDA, CUDA total, calls, memory), sorted by `sort` (self_cuda by default), `top` rows (0:
    all, at most 200);
    `by_shape` splits each op by its input shapes."""
    extra = ("--sort", sort) if sort else ()
    shape = ("--by-shape",) if by_shape else ()
    return _table(
        _command("summary", _path(path), "--format", "json", "--top", _rows(top), *extra, *shape)
    )


def kernels(path: str, sort: str | None = None, top: int = 20) -> Any:
    """The GPU kernel table: calls, total, min, max GPU time per kernel name; `top` rows (0:
    all, at most 200)."""
    extra = ("--sort", sort) if sort else ()
    return _table(
        _command(
            "summary", _path(path), "--kernels", "--format", "json", "--top", _rows(top), *extra
        )
    )


def tree(path: str, view: str | None = None, depth: int = 6) -> Any:
    """Where the time goes as a call tree (Python frames, modules, annotations, ops), by GPU
    time where the trace has GPU work; `view`: top-down, bottom-up, modules, module classes."""
    extra = ("--view", view) if view else ()
    if depth < 1:
        raise ValueError(f"depth {depth}: levels of the tree, 1 or more")
    depth_arg = str(min(depth, 20))
    argv = ("--tree", "--format", "json", "--depth", depth_arg, *extra)
    return _command("summary", _path(path), *argv)


def roofline(path: str, top: int = 20) -> Any:
    """FLOPs, bytes, achieved TFLOP/s and TB/s and % of the device's peak per op and input
    shapes (traces recorded with record_shapes=True)."""
    return _command("summary", _path(path), "--roofline", "--format", "json", "--top", _rows(top))


def graphs(path: str, top: int = 20) -> Any:
    """The CUDA/HIP graphs replayed, each with its kernels per graph node."""
    return _command("summary", _path(path), "--graphs", "--format", "json", "--top", _rows(top))


def diff(base: str, new: str, top: int = 20) -> Any:
    """What changed from BASE to NEW (two traces: step time, GPU busy, idle by cause, the op,
    kernel and region tables by the largest change, a region's replaced kernels cut to 5;
    two folders of rank traces: each rank's step, GPU busy and communication, the ranks that
    regressed most, the stragglers)."""
    argv = (_path(base), _path(new), "--format", "json", "--top", _rows(top))
    return _replaced_cut(_command("diff", *argv))


REPLACED_SHOWN = 5  # of a region's kernels gone or new: the list can run to hundreds


def _replaced_cut(doc: dict[str, Any]) -> dict[str, Any]:
    """The diff with each region's `replaced` kernels cut to the first few, and their counts."""
    for region in doc.get("regions", ()):
        replaced = region.get("replaced")
        if isinstance(replaced, dict):
            for side in ("gone", "new"):
                names = replaced.get(side) or []
                replaced[side], replaced[f"{side}_count"] = names[:REPLACED_SHOWN], len(names)
    return doc


def ranks(path: str, top: int = 20) -> Any:
    """The rank table of a folder of one job's rank traces: per rank its steps, GPU busy,
    communication, wait in collectives and own work; the straggler and the slowest rank; the
    rank x step matrix and the collectives that waited longest (`top` of them)."""
    from tui.model.ingest.rank_folder import rank_files

    if Path(_path(path)).is_dir():  # a missing path: the command says so
        found = rank_files(path)
        if found is None:
            raise ValueError(f"{printable(path)}: not a folder of rank traces")
        if found.mixed is not None:
            raise ValueError(f"{printable(path)}: {found.mixed}: not one job's ranks")
    elif Path(path).exists():
        raise ValueError(f"{printable(path)}: not a folder of rank traces")
    return _command("summary", path, "--format", "json", "--top", _rows(top))


def gaps(path: str, top: int = 10) -> Any:
    """The longest idle gaps of the GPU (every stream idle first, then single streams; `top`
    of them, at most 50), each with its cause (HTA's rule: host wait, kernel wait, other) and
    what the CPU did meanwhile: the DataLoader, the calls covering it, a sync waiting on the
    GPU, the launch that ended it."""
    trace = _load(path)
    found = idle_gaps(trace)
    order = largest_first(found)[: min(int(_rows(top)), MAX_GAPS)]
    return {
        "path": path,
        "gaps": [
            {
                "start_ns": int(found.start[k]),
                "dur_ns": int(found.length[k]),
                "whole_device": bool(found.whole_device[k]),
                "cause": CAUSES[int(found.cause[k])],
                "details": dict(gap_details(trace, found, int(k))),
            }
            for k in order
        ],
    }


def _path(path: str) -> str:
    """A path as the tools take it: an empty one would read the newest trace of the server's
    folder, and `-` standard input, which is the protocol's stream."""
    if not path or path == "-":
        raise ValueError(f"path {path!r}: the trace or folder to read")
    return path


def _load(path: str) -> Trace:
    """Through the model cache, as every other tool; the command's one-line error."""
    from tui.commands.loading import load

    try:
        return load(argparse.Namespace(no_cache=False, yes=True, workers=None), _path(path))
    except CommandError as e:
        raise ValueError(str(e)) from None


def slice_at(path: str, lane: str, time_ns: int) -> Any:
    """The slice on `lane` (a lane's name as `info` lists them, e.g. "stream 7" or
    "thread 1 (python3)", or its index) at `time_ns` (ns from the trace start): the innermost
    one covering that time, with everything the viewer's details panel says about it."""
    trace = _load(path)
    found = [x for x in trace.lanes if x.name == lane or str(x.index) == lane]
    if not found:
        names = ", ".join(printable(x.name) for x in trace.lanes[:12])
        raise ValueError(f"no lane named {printable(lane)!r}; the lanes: {names}")
    row = _innermost(trace, found[0].lo, found[0].hi, time_ns)
    if row < 0:
        raise ValueError(f"no slice on {printable(lane)} at {time_ns} ns")
    try:
        details = slice_details(trace, row)
    except TraceError as e:
        raise ValueError(str(e)) from None
    return {"lane": found[0].name, "row": row, "details": dict(details)}


def _innermost(trace: Trace, lo: int, hi: int, t: int) -> int:
    """The deepest slice of rows [lo, hi) covering time `t` (-1: none)."""
    s = trace.slices
    start, end = s.start[lo:hi], s.start[lo:hi] + np.maximum(s.dur[lo:hi], 1)
    covering = np.flatnonzero((start <= t) & (t < end))
    if not len(covering):
        return -1
    return lo + int(covering[np.argmax(s.depth[lo:hi][covering])])
