"""Where the time goes, as a tree: the CPU slices of a scope merged by call path (the chain of
names from a lane's top: Python frames, modules, annotations, ops), each node with its total
and self time by CPU, or by the GPU time attributed to the ops under it (the op table's
Self CUDA: kernel -> launch -> the op around the launch).

- Top-down: a node's total is the time of the slices on its path, its self that total less its
  children's; the root's total is the scope's.
- Bottom-up: the callers of each frame, weighted by its self time, so the heaviest leaves come
  first and their call paths follow.
- Modules: the same tree with only `nn.Module: Name` frames kept (each under its nearest module
  above), so "which layer costs most GPU time" has one answer; by class, a class's instances
  (`Qwen2DecoderLayer_0` to `_23`) are one node: "which kind of layer".

Every `ProfilerStep#N` of the scope is one node, `ProfilerStep*`, as in torch's table, so the
heaviest path across steps shows (a scope of one step keeps its name). Where the tops are on more
than one thread, each thread is a node under the root (the autograd engine's thread holds the
backward ops, which would otherwise be tops of their own beside the steps).

Where a slice's children overlap each other (a `ProfilerStep#N` that starts inside the Python
frame of its `__enter__`), their time is counted in both and its self goes negative, exactly as
torch's table has it.
"""

from __future__ import annotations

from functools import cached_property

import msgspec
import numpy as np

from tui.model.arrays import I64

from ..patterns import MODULE_INSTANCE, MODULE_PREFIX, PROFILER_STEP, PROFILER_STEP_ROW
from ..trace import Trace
from .attribution import cuda_totals, op_tree
from .scope import Scope

ROOT = "(all)"


class CallTree(msgspec.Struct, frozen=True, dict=True):
    """Nodes 1..n; node 0 is the root. Per node: its parent, name id (-1 for the root), call
    count, total and self weight (ns), and its longest slice (to jump to)."""

    parent: I64
    name: I64
    calls: I64
    total: I64
    self_: I64
    longest: I64  # a slice row (-1 for the root)
    names: list[str]
    weight: str  # "cpu" or "gpu"
    inverted: bool = False  # bottom-up: a node's children are its callers
    threads: int = 0  # nodes 1..threads are threads (their calls: their tops), not frames

    def is_thread(self, node: int) -> bool:
        return 0 < node <= self.threads

    def children(self, node: int) -> list[int]:
        """Heaviest first."""
        return self._children.get(node, [])

    @cached_property
    def _children(self) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        order = np.lexsort((np.arange(len(self.parent)), -self.total)).tolist()
        for child in order:  # heaviest first, then in the order they were found
            if child:
                found.setdefault(int(self.parent[child]), []).append(child)
        return found

    def label(self, node: int) -> str:
        return ROOT if node == 0 else self.names[int(self.name[node])]

    def heaviest_path(self) -> list[int]:
        """From the root down the heaviest child each time."""
        path, node = [0], 0
        while True:
            kids = self.children(node)
            if not kids or not self.total[kids[0]]:
                return path
            node = kids[0]
            path.append(node)

    def path(self, node: int) -> list[int]:
        out = []
        while node > 0:
            out.append(node)
            node = int(self.parent[node])
        return out[::-1]


def call_tree(
    trace: Trace,
    scope: Scope | None = None,
    weight: str = "cpu",
    modules: bool = False,
    by_class: bool = False,
) -> CallTree:
    """Remembered per scope, weight and view, as the pane asks again. `by_class` (with
    `modules`): a module's instances are one node (`Qwen2DecoderLayer` for `_0` to `_23`)."""
    key = f"call_tree {scope} {weight} {modules} {by_class}"
    return trace.derive(key, lambda: _call_tree(trace, scope, weight, modules, by_class))


VIEWS = ("top-down", "bottom-up", "modules", "module classes")


def tree_for(trace: Trace, view: str, scope: Scope | None, weight: str) -> CallTree:
    """The tree of one of VIEWS."""
    if view == "bottom-up":
        return bottom_up(trace, scope, weight)
    modules = view in ("modules", "module classes")
    return call_tree(trace, scope, weight, modules, by_class=view == "module classes")


def bottom_up(trace: Trace, scope: Scope | None = None, weight: str = "cpu") -> CallTree:
    """Each frame's callers: roots are names weighted by their self time summed over every
    call path; a node's children are the frames that called it there."""
    key = f"bottom_up {scope} {weight}"
    return trace.derive(key, lambda: _bottom_up(trace, scope, weight))


def _rows(trace: Trace, scope: Scope | None, modules: bool) -> tuple[I64, I64]:
    """The CPU slices counted, and each one's parent among them (-1: a top)."""
    s = trace.slices
    # The slices torch's tree has (ops, annotations, Python frames; every CPU slice of another
    # tool's trace), not the profiler's own span on its `Spans` track, nor an op's wrapper of
    # the same name (key_averages folds those).
    keep = op_tree(trace).is_op.copy()
    if scope is not None:
        keep &= scope.rows(trace)
    if modules:
        is_module = trace.name_test(lambda n: n.startswith(MODULE_PREFIX))
        keep &= is_module[s.name]
    up = s.parent.astype(np.int64).copy()
    # Up through slices not counted (out of scope, or not modules) to the nearest counted one.
    climb = np.flatnonzero(keep & (up >= 0))
    climb = climb[~keep[up[climb]]]
    while len(climb):
        up[climb] = s.parent[up[climb]]
        climb = climb[(up[climb] >= 0) & ~keep[np.maximum(up[climb], 0)]]
    rows = np.flatnonzero(keep)
    return rows, up


def _weights(trace: Trace, weight: str, rows: I64, up: I64) -> tuple[I64, I64]:
    """(total, self) per counted slice row (indexed by slice row): a slice's total is its
    duration, or the GPU time charged to it and to every slice inside it; its self is that
    less its counted children's totals (in the module view, the modules inside it)."""
    s = trace.slices
    n = len(s)
    if weight == "gpu":
        total = cuda_totals(trace)[0].astype(np.int64)  # Self CUDA of each op (0 elsewhere)
        cpu = np.flatnonzero(trace.kind_mask("cpu") & (s.parent >= 0))
        # Deepest first in the tree itself: a slice drawn on an extra row (nesting.py) has a
        # row number deeper than its children's.
        depth = _tree_depth(s.parent.astype(np.int64), cpu)
        for level in np.unique(depth)[::-1].tolist():
            here = cpu[depth == level]
            np.add.at(total, s.parent[here], total[here])
    else:
        total = s.dur.astype(np.int64).copy()
    inside = np.zeros(n, np.int64)
    has = rows[up[rows] >= 0]
    np.add.at(inside, up[has], total[has])
    return total, total - inside


def _tree_depth(parent: I64, rows: I64) -> I64:
    """How many ancestors each of `rows` has."""
    depth = np.zeros(len(rows), np.int64)
    at = parent[rows]
    live = np.flatnonzero(at >= 0)
    while len(live):
        depth[live] += 1
        at[live] = parent[at[live]]
        live = live[at[live] >= 0]
    return depth


def _labels(trace: Trace, rows: I64, by_class: bool) -> tuple[I64, list[str]]:
    """Each name's id among the nodes' names, and those names: the steps of `rows` as one
    `ProfilerStep*` where there are several, and with `by_class` module instances merged by
    class (`nn.Module: Linear_91` -> `nn.Module: Linear`)."""
    names = trace.names
    steps = np.unique(
        trace.slices.name[rows][trace.name_test(PROFILER_STEP.match)[trace.slices.name[rows]]]
    )
    merge = {int(n) for n in steps.tolist()} if len(steps) > 1 else set()
    if not by_class and not merge:
        return np.arange(len(names), dtype=np.int64), names
    merged: dict[str, int] = {}
    ids = []
    for i, name in enumerate(names):
        if i in merge:
            name = PROFILER_STEP_ROW
        elif by_class and name.startswith(MODULE_PREFIX):
            name = MODULE_INSTANCE.sub("", name)
        ids.append(merged.setdefault(name, len(merged)))
    return np.asarray(ids, np.int64), list(merged)


def _threads(trace: Trace, tops: I64) -> tuple[I64, list[str]]:
    """Each top's thread, numbered from 1 in lane order, and the threads' names; none where
    the tops are all on one thread."""
    lanes = trace.lane_indices(tops)
    found = np.unique(lanes)
    if len(found) < 2:
        return np.zeros(len(tops), np.int64), []
    return np.searchsorted(found, lanes).astype(np.int64) + 1, [
        trace.lanes[int(lane)].name for lane in found.tolist()
    ]


def _call_tree(
    trace: Trace, scope: Scope | None, weight: str, modules: bool, by_class: bool
) -> CallTree:
    s = trace.slices
    rows, up = _rows(trace, scope, modules)
    total, own = _weights(trace, weight, rows, up)
    node = np.full(len(s), -1, np.int64)
    name_id, labels = _labels(trace, rows, by_class)
    level = rows[up[rows] < 0]
    above, threads = _threads(trace, level)  # the root (0), or each top's thread's node
    thread_names = len(labels) + np.arange(len(threads), dtype=np.int64)
    labels = [*labels, *threads]
    width = len(labels) + 1
    parents: list[I64] = [np.asarray([-1]), np.zeros(len(threads), np.int64)]
    names: list[I64] = [np.asarray([-1]), thread_names]
    count = 1 + len(threads)
    # Level by level from the tops: a slice's node is (its parent's node, its name).
    has_up = rows[up[rows] >= 0]
    marked = np.zeros(len(s), bool)
    while len(level):
        keys = above * width + name_id[s.name[level]]
        found, index = np.unique(keys, return_inverse=True)
        node[level] = count + index
        parents.append(found // width)
        names.append(found % width)
        count += len(found)
        marked[level] = True
        below = has_up[marked[up[has_up]]]
        marked[level] = False
        above = node[up[below]]
        level = below
    parent, name = np.concatenate(parents), np.concatenate(names)
    tops = rows[up[rows] < 0]
    return _sums(trace, rows, tops, node, parent, name, total, own, weight, count, labels)


def _sums(
    trace: Trace,
    rows: I64,
    tops: I64,
    node: I64,
    parent: I64,
    name: I64,
    total: I64,
    own: I64,
    weight: str,
    count: int,
    labels: list[str],
) -> CallTree:
    s = trace.slices
    at = node[rows]
    calls = np.bincount(at, minlength=count).astype(np.int64)
    totals = np.bincount(at, weights=total[rows], minlength=count).astype(np.int64)
    selfs = np.bincount(at, weights=own[rows], minlength=count).astype(np.int64)
    totals[0] = int(total[tops].sum())
    # A thread's node (a node under the root that no slice has) holds its tops: their count,
    # their total, no self time of its own, and the longest of them to jump to.
    thread = parent[node[tops]]
    on_thread = thread > 0
    calls += np.bincount(thread[on_thread], minlength=count)
    totals += np.bincount(
        thread[on_thread], weights=total[tops[on_thread]], minlength=count
    ).astype(np.int64)
    longest = np.full(count, -1, np.int64)
    order = rows[np.lexsort((s.dur[rows], at))]  # by node, then shortest first
    longest[node[order]] = order  # the last written, the longest, wins
    order = tops[on_thread][np.argsort(s.dur[tops[on_thread]], kind="stable")]
    longest[parent[node[order]]] = order
    threads = len(np.unique(thread[on_thread]))
    return CallTree(parent, name, calls, totals, selfs, longest, labels, weight, threads=threads)


def _bottom_up(trace: Trace, scope: Scope | None, weight: str) -> CallTree:
    s = trace.slices
    rows, up = _rows(trace, scope, False)
    _, own = _weights(trace, weight, rows, up)
    name_id, labels = _labels(trace, rows, False)
    rows = rows[own[rows] != 0]
    width = len(labels) + 1
    parents: list[I64] = [np.asarray([-1])]
    names: list[I64] = [np.asarray([-1])]
    calls_of: list[I64] = [np.asarray([0])]
    sums: list[I64] = [np.asarray([int(own[rows].sum())])]
    longest_of: list[I64] = [np.asarray([-1])]
    count = 1
    # Each slice's self weight goes up its chain of callers: level k is its k-th ancestor.
    frame = rows.copy()
    above = np.zeros(len(rows), np.int64)
    weights = own[rows]
    while len(frame):
        keys = above * width + name_id[s.name[frame]]
        found, index = np.unique(keys, return_inverse=True)
        parents.append(found // width)
        names.append(found % width)
        calls_of.append(np.bincount(index, minlength=len(found)).astype(np.int64))
        sums.append(np.bincount(index, weights=weights, minlength=len(found)).astype(np.int64))
        pick = np.full(len(found), -1, np.int64)
        order = np.lexsort((s.dur[frame], index))
        pick[index[order]] = frame[order]
        longest_of.append(pick)
        here = count + index
        count += len(found)
        caller = up[frame]
        go = caller >= 0
        frame, above, weights = caller[go], here[go], weights[go]
    total = np.concatenate(sums)
    return CallTree(
        np.concatenate(parents),
        np.concatenate(names),
        np.concatenate(calls_of),
        total,
        total.copy(),  # a caller's share of the frame's self time: all of it is "self" here
        np.concatenate(longest_of),
        labels,
        weight,
        inverted=True,
    )
