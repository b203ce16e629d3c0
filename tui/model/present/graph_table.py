"""The graph table: one CUDA/HIP graph's kernels, one row per graph node across its replays."""

from __future__ import annotations

from ..analysis.graphs import Node
from ..text import printable
from ..timescale import format_duration
from . import vocabulary as v
from .table_spec import Column, Table

GRAPH_NODES: Table[Node] = Table(
    "graph",
    (
        Column(
            "name", v.NAME, lambda n: n.name, lambda n, _: printable(n.name), "name", numeric=False
        ),
        Column("node", "Node", lambda n: n.index + 1, lambda n, _: str(n.index + 1), "node"),
        Column(
            "node_id",
            "Node id",
            lambda n: n.node_id,
            lambda n, _: n.node_id,
            "node_id",
            numeric=False,
        ),
        Column("calls", v.CALLS, lambda n: n.calls, lambda n, _: f"{n.calls:,}", "calls"),
        Column(
            "total",
            v.TOTAL,
            lambda n: n.total_ns,
            lambda n, _: format_duration(n.total_ns),
            "total_ns",
        ),
        Column(
            "avg",
            v.AVG,
            lambda n: round(n.avg_ns),
            lambda n, _: format_duration(round(n.avg_ns)),
            "avg_ns",
        ),
        Column("min", v.MIN, lambda n: n.min_ns, lambda n, _: format_duration(n.min_ns), "min_ns"),
        Column("max", v.MAX, lambda n: n.max_ns, lambda n, _: format_duration(n.max_ns), "max_ns"),
    ),
    "total",
)
