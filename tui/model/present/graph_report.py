"""`trace-tui summary FILE --graphs`: the CUDA/HIP graphs replayed, each with its kernels grouped
per graph node across its replays, as text, Markdown or JSON.

JSON schema: path, gpu_ns (all GPU work), graphs: [{label, replays, kernels (per replay),
  gpu_ns, share (of all GPU work), launch_cpu_ns, nodes: [{name, node (its place in the first
  replay, from 1), node_id (Kineto's graph node id, "" where not written), calls, total_ns,
  avg_ns, min_ns, max_ns}] most time first (`--top`: the heaviest)}], most GPU time first.
"""

from __future__ import annotations

from typing import Any

from ..analysis.graphs import Graphs, Node, nodes
from ..text import counted, printable
from ..timescale import format_duration
from ..trace import Trace
from .graph_table import GRAPH_NODES
from .render import lines
from .render.json import dumps
from .table_spec import Grid

NONE = "no CUDA graph replays: no cudaGraphLaunch or hipGraphLaunch here started GPU work"


def as_json(trace: Trace, found: Graphs, top: int) -> bytes:
    doc: dict[str, Any] = {
        "path": trace.path,
        "gpu_ns": found.gpu_ns,
        "graphs": [
            {
                "label": g.label,
                "replays": g.calls,
                "kernels": g.kernels,
                "gpu_ns": g.gpu_ns,
                "share": round(found.share(g), 6),
                "launch_cpu_ns": g.launch_cpu_ns,
                "nodes": GRAPH_NODES.view(_top(_heaviest(trace, found, i), top)).records(),
            }
            for i, g in enumerate(found.graphs)
        ],
    }
    return dumps(doc)


def as_csv(trace: Trace, found: Graphs, top: int) -> list[Grid]:
    """Each graph's nodes, the table named for the graph ("graph #1"); without graphs, the
    header alone."""
    if not found.graphs:
        return [GRAPH_NODES.view([]).grid()]
    return [
        GRAPH_NODES.view(_top(_heaviest(trace, found, i), top)).grid(g.label)
        for i, g in enumerate(found.graphs)
    ]


def as_text(trace: Trace, found: Graphs, top: int, markdown: bool) -> str:
    head = printable(trace.path)
    out = [f"### trace-tui graphs: `{head}`" if markdown else head]
    if not found.graphs:
        return "\n".join([*out, NONE]) + "\n"
    graphed = sum(g.gpu_ns for g in found.graphs)
    share = graphed / found.gpu_ns if found.gpu_ns else 0.0
    out.append(
        f"{counted(len(found.graphs), 'graph')}, {counted(len(found.replays), 'replay')}: "
        f"{format_duration(graphed)} of GPU work, {share:.0%} of all"
    )
    for i, g in enumerate(found.graphs):
        out.append("")
        out.append(
            f"{g.label}: {counted(g.calls, 'replay')} of {counted(g.kernels, 'kernel')}, "
            f"{format_duration(g.gpu_ns)} of GPU work ({found.share(g):.0%}), launch calls "
            f"{format_duration(g.launch_cpu_ns)}"
        )
        out += lines(GRAPH_NODES.view(_top(_heaviest(trace, found, i), top)).grid(), markdown)
    return "\n".join(out) + "\n"


def _heaviest(trace: Trace, found: Graphs, graph: int) -> list[Node]:
    """A graph's nodes, most time first (then in the order of its first replay)."""
    return sorted(nodes(trace, found, graph), key=lambda n: (-n.total_ns, n.index))


def _top(rows: list[Node], top: int) -> list[Node]:
    return rows[:top] if top else rows
