"""Which CPU op each piece of GPU work belongs to: kernel -> launch -> innermost enclosing op.

Launches are joined to their GPU work by flows or `correlation` (see ingest/links.py), through the
runtime (`cudaLaunchKernel`) and the driver (`cuLaunchKernel`, used by Triton and CUTLASS) alike.
The op is found by time containment on the launching thread (the launch's nearest enclosing op),
not by `External id`, which some real traces fill with unrelated values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tui.model.arrays import I64, Bool

from ..patterns import HOST_OP_CATEGORIES, is_gpu_work_category
from ..trace import Trace


@dataclass(frozen=True)
class OpTree:
    """The ops key_averages() would count, and each slice's nearest enclosing op (-1: none)."""

    is_op: Bool
    up: I64


@dataclass(frozen=True)
class Attribution:
    """Every piece of GPU work (kernel, memcpy, memset) and where its time goes."""

    work: I64  # slice rows of the GPU work
    launch: I64  # the launch call (-1: not in the trace)
    op: I64  # the op charged with it (-1: no launch in the trace)


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
    up = s.parent.astype(np.int64)
    climb = np.flatnonzero((up >= 0) & ~is_op[np.maximum(up, 0)])
    while len(climb):  # look through slices that are not ops (Python frames)
        up[climb] = s.parent[up[climb]]
        climb = climb[(up[climb] >= 0) & ~is_op[np.maximum(up[climb], 0)]]
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
        moved = np.flatnonzero(is_op & (up >= 0) & folded[np.maximum(up, 0)])
        while len(moved):
            up[moved] = up[up[moved]]
            moved = moved[(up[moved] >= 0) & folded[np.maximum(up[moved], 0)]]


def attribute(trace: Trace) -> Attribution:
    """Computed once per trace."""
    return trace.derive("attribution", lambda: _attribute(trace))


def gpu_work_rows(trace: Trace) -> I64:
    """Slice rows of kernels, memcpys and memsets on GPU lanes, by lane then start."""
    work_cat = trace.category_test(is_gpu_work_category)
    return np.flatnonzero(trace.kind_mask("gpu") & work_cat[trace.slices.cat]).astype(np.int64)


def _attribute(trace: Trace) -> Attribution:
    work = gpu_work_rows(trace)
    launch = launch_of(trace)[work]
    tree = op_tree(trace)
    op = np.full(len(work), -1, np.int64)
    known = launch >= 0
    enclosing = tree.up[launch[known]]
    op[known] = np.where(enclosing >= 0, enclosing, launch[known])
    return Attribution(work, launch, op)


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
