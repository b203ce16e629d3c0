"""Each op's input shapes, as `key_averages(group_by_input_shape=True)` groups by them: the
`Input Dims` that `record_shapes=True` writes, as text ("[[8, 64], [64, 64]]"); an op without
them has "[]", as torch's `input_shapes` of such an event is an empty list.
"""

from __future__ import annotations

import msgspec
import numpy as np

from tui.model.arrays import I64

from ..trace import Trace
from .attribution import op_tree

BATCH = 32768  # ops whose shape args are read at a time
NO_SHAPES = "[]"


class OpShapes(msgspec.Struct, frozen=True):
    """Per slice row, an index into `texts` (-1 for slices that are not ops)."""

    shape: I64
    texts: list[str]


def op_shapes(trace: Trace) -> OpShapes:
    """Read once per trace (every op's args: about a second per million ops)."""
    return trace.derive("op_shapes", lambda: _op_shapes(trace))


def _op_shapes(trace: Trace) -> OpShapes:
    rows = np.flatnonzero(op_tree(trace).is_op)
    # In file order and a batch at a time: each chunk of the file is decoded about once.
    rows = rows[np.argsort(trace.slices.event[rows], kind="stable")]
    shape = np.full(len(trace.slices), -1, np.int64)
    texts: dict[str, int] = {NO_SHAPES: 0}
    for a in range(0, len(rows), BATCH):
        batch = rows[a : a + BATCH]
        found = trace.args_reader.shapes(trace.slices.event[batch])
        ids = [texts.setdefault(_text(args), len(texts)) for args in found]
        shape[batch] = ids
    return OpShapes(shape, list(texts))


def _text(args: object) -> str:
    dims = args.get("Input Dims") if isinstance(args, dict) else None
    if not isinstance(dims, list):
        return NO_SHAPES
    return str(dims)  # as torch prints input_shapes
