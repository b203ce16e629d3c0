"""Every table of the product, declared with the spec (table_spec.py), by name: a new table is
its declaration plus one line here (tests walk this list, and fail on a table left out)."""

from __future__ import annotations

from typing import Any

from .diff_tables import DIFF_TABLES, HEADLINES
from .graph_table import GRAPH_NODES
from .kernel_table import KERNELS
from .op_table import OPS, SHAPES
from .rank_diff_report import RANK_CHANGES
from .rank_tables import COLLECTIVES, MATRIX, RANKS
from .roofline_table import ROOFLINE
from .step_table import STEPS
from .table_spec import Table
from .tree_table import TREE

# Tables over different row types: each is checked against its rows where it is declared.
TABLES: tuple[Table[Any], ...] = (
    OPS,
    SHAPES,
    KERNELS,
    STEPS,
    HEADLINES,
    *DIFF_TABLES.values(),
    RANKS,
    MATRIX,
    COLLECTIVES,
    RANK_CHANGES,
    ROOFLINE,
    GRAPH_NODES,
    TREE,
)
