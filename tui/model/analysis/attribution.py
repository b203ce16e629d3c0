"""Which CPU op each piece of GPU work belongs to, by torch's rule first.

1. `External id`: key_averages() gives a kernel's time to the op whose correlation id the kernel
   (or its launch) carries as `External id`: the record_function on top of the op stack at launch,
   never a Python frame (ingest/links.py joins them; an op folded into its parent hands it on).
   The op must hold the launch on its thread; kernels with no launch in the trace go to rule 2's
   fallback (no op), as before, since their id cannot be checked.
2. Where no op carries it (older Kineto files, other tools): the innermost op enclosing the launch
   on its thread that is not a Python frame. Launches are joined to their GPU work by flows or
   `correlation`, through the runtime (`cudaLaunchKernel`) and the driver (`cuLaunchKernel`).
3. Where no op encloses the launch: the launch call itself.
GPU work with neither an owner nor a launch in the trace is charged to no op.
"""

from __future__ import annotations

import msgspec
import numpy as np

from tui.model.arrays import I64, Bool

from ..patterns import HOST_OP_CATEGORIES, is_gpu_work_category, is_python_frame
from ..trace import Trace


class OpTree(msgspec.Struct, frozen=True):
    """The ops key_averages() would count, and each slice's nearest enclosing op (-1: none)."""

    is_op: Bool
    up: I64


# Attribution.rule: which rule placed a piece of GPU work (see the module's docstring).
BY_EXTERNAL_ID, BY_ENCLOSING_OP, BY_LAUNCH, UNPLACED = 0, 1, 2, 3
RULES = ("external_id", "enclosing_op", "launch_call", "none")


class Attribution(msgspec.Struct, frozen=True):
    """Every piece of GPU work (kernel, memcpy, memset) and where its time goes."""

    work: I64  # slice rows of the GPU work
    launch: I64  # the launch call (-1: not in the trace)
    op: I64  # the op charged with it (-1: none)
    rule: I64  # which rule chose `op` (BY_EXTERNAL_ID ... UNPLACED)

    def placed_by(self) -> dict[str, int]:
        """How many pieces of GPU work each rule placed."""
        counts = np.bincount(self.rule, minlength=len(RULES))
        return {name: int(n) for name, n in zip(RULES, counts, strict=True)}


def launch_of(trace: Trace) -> I64:
    """For every slice, the launch slice that started it (-1 for none)."""
    launch = np.full(len(trace.slices), -1, np.int64)
    launch[trace.launches.dst] = trace.launches.src
    return launch


def op_tree(trace: Trace) -> OpTree:
    """Computed once per trace."""
    return trace.derive("op_tree", lambda: _op_tree(trace))


def _op_tree(trace: Trace) -> OpTree:
    s = trace.slices
    cpu_row = trace.kind_mask("cpu")
    op_cat = trace.category_test(lambda c: c.lower() in HOST_OP_CATEGORIES)
    is_op = cpu_row & op_cat[s.cat]
    if not is_op.any():  # another tool's trace: every CPU slice is an op
        is_op = cpu_row
    up = _climb(s.parent.astype(np.int64), s.parent.astype(np.int64), ~is_op)  # past non-ops
    return OpTree(_drop_wrappers(is_op, up, s.name.astype(np.int64)), up)


def _drop_wrappers(is_op: Bool, up: I64, name: I64) -> Bool:
    """Fold an op into its parent when it is the parent's only child and has its name.

    torch does this in key_averages() (EventList._remove_dup_nodes): an overload calling itself
    counts once. Children of a folded op move up to the parent (`up` is updated in place).
    """
    is_op = is_op.copy()
    while True:
        has_up = is_op & (up >= 0)
        children = np.bincount(up[has_up], minlength=len(up))
        rows = np.flatnonzero(has_up)
        dup = rows[(name[up[rows]] == name[rows]) & (children[up[rows]] == 1)]
        if len(dup) == 0:
            return is_op
        is_op[dup] = False
        folded = np.zeros(len(up), bool)
        folded[dup] = True
        # Children of folded ops climb to the nearest op left (a chain may fold at once).
        moved = np.flatnonzero(is_op)
        up[moved] = _climb(up, up[moved], folded)


def attribute(trace: Trace) -> Attribution:
    """Computed once per trace."""
    return trace.derive("attribution", lambda: _attribute(trace))


# The slot of `placed_by`'s counts, kept with the cached model (passes/facts.py): `info` shows
# them without building the op tree again.
PLACED_KEY = "gpu work placed by"


def placed_by(trace: Trace) -> dict[str, int]:
    """How many pieces of GPU work each rule placed, by RULES name."""
    return trace.derive(PLACED_KEY, lambda: attribute(trace).placed_by())


def gpu_work_rows(trace: Trace) -> I64:
    """Slice rows of kernels, memcpys and memsets on GPU lanes, by lane then start."""
    work_cat = trace.category_test(is_gpu_work_category)
    return np.flatnonzero(trace.kind_mask("gpu") & work_cat[trace.slices.cat]).astype(np.int64)


def _attribute(trace: Trace) -> Attribution:
    work = gpu_work_rows(trace)
    launch = launch_of(trace)[work]
    tree = op_tree(trace)
    op = np.full(len(work), -1, np.int64)
    rule = np.full(len(work), UNPLACED, np.int64)
    known = launch >= 0
    enclosing = _enclosing_non_python_op(trace, tree, launch[known])
    op[known] = np.where(enclosing >= 0, enclosing, launch[known])
    rule[known] = np.where(enclosing >= 0, BY_ENCLOSING_OP, BY_LAUNCH)
    owner = np.full(len(trace.slices), -1, np.int64)
    owner[trace.external.dst] = trace.external.src
    owned = owner[work]
    has_owner = (owned >= 0) & known
    has_owner[has_owner] = _encloses(trace, owned[has_owner], launch[has_owner])
    op[has_owner] = _nearest_op(tree, owned[has_owner])
    rule[has_owner] = BY_EXTERNAL_ID
    return Attribution(work, launch, op, rule)


def _encloses(trace: Trace, outer: I64, inner: I64) -> Bool:
    """Whether each `outer` slice holds its `inner` one on the same lane.

    The op on top of the stack at a launch always holds it. Older Kineto files number ops and
    kernels from different counters, so that an id may name an unrelated op (`aten::view` for a
    copy kernel): such an owner is not taken.
    """
    s = trace.slices
    same_lane = trace.lane_indices(outer) == trace.lane_indices(inner)
    inside = (s.start[outer] <= s.start[inner]) & (s.end[inner] <= s.end[outer])
    return np.asarray(same_lane & inside)


def _nearest_op(tree: OpTree, rows: I64) -> I64:
    """Each row, or the op it was folded into (torch lifts a folded op's kernels to its parent)."""
    return _climb(tree.up, rows, ~tree.is_op)


def _enclosing_non_python_op(trace: Trace, tree: OpTree, launches: I64) -> I64:
    """The innermost op enclosing each launch that is not a Python frame (-1: none)."""
    python = trace.category_test(is_python_frame)
    return _climb(tree.up, tree.up[launches], python[trace.slices.cat])


def _climb(up: I64, rows: I64, skip: Bool) -> I64:
    """Each row, or its first ancestor by `up` that `skip` does not mark (-1: none)."""
    rows = rows.copy()
    climb = np.flatnonzero((rows >= 0) & skip[np.maximum(rows, 0)])
    while len(climb):
        rows[climb] = up[rows[climb]]
        climb = climb[(rows[climb] >= 0) & skip[np.maximum(rows[climb], 0)]]
    return rows


def cuda_totals(trace: Trace) -> tuple[I64, I64]:
    """Per slice row: Self CUDA (GPU time its launches started) and CUDA total (its subtree's)."""
    att = attribute(trace)
    tree = op_tree(trace)
    n = len(trace.slices)
    dur = trace.slices.dur[att.work]
    known = att.op >= 0
    self_cuda = np.zeros(n, np.int64)
    np.add.at(self_cuda, att.op[known], dur[known])
    total = self_cuda.copy()
    at, amount = att.op[known], dur[known]
    at = tree.up[at]
    while len(at):
        keep = at >= 0
        at, amount = at[keep], amount[keep]
        np.add.at(total, at, amount)
        at = tree.up[at]
    return self_cuda, total
