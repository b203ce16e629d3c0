"""Per-op statistics like torch's `key_averages()`, with GPU time charged to the launching op."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import numpy as np

from tui.model.arrays import F64, I64

from ..patterns import PROFILER_STEP, PROFILER_STEP_ROW, is_python_frame
from ..text import counted
from ..trace import Trace
from .attribution import attribute, cuda_totals, op_tree
from .graphs import Graph, graphs
from .memory import OUTSIDE_OPS, op_memory
from .op_shapes import op_shapes
from .scope import Scope

if TYPE_CHECKING:
    from .op_work import WorkTotals

# The row for GPU work whose launch call is not in the trace.
UNLAUNCHED = "(GPU work launched outside the trace)"


class OpStat(msgspec.Struct, frozen=True):
    """One row of the table: an op name and its totals (ns)."""

    name: str
    calls: int
    self_cpu_ns: int
    cpu_total_ns: int
    self_cuda_ns: int = 0
    cuda_total_ns: int = 0
    self_cpu_mem: int = 0  # bytes, as key_averages(): allocations less frees
    cpu_mem: int = 0
    self_cuda_mem: int = 0
    cuda_mem: int = 0
    shapes: str = ""  # Input Dims, in the by-shape table (key_averages(group_by_input_shape))
    cpu_min_ns: int = 0  # a call's CPU total, least and most
    cpu_max_ns: int = 0
    cuda_min_ns: int = 0  # a call's CUDA total, least and most
    cuda_max_ns: int = 0
    work: WorkTotals | None = None  # the modelled calls' FLOPs and roof (op_work.py)
    python: bool = False  # a Python frame (`with_stack=True`): the tables leave it out by default

    @property
    def key(self) -> str:
        """What tells rows apart: the name, and in the by-shape table the shapes too."""
        return f"{self.name}\x00{self.shapes}" if self.shapes else self.name

    @property
    def cpu_avg_ns(self) -> float:
        return self.cpu_total_ns / self.calls if self.calls else 0.0

    @property
    def cuda_avg_ns(self) -> float:
        return self.cuda_total_ns / self.calls if self.calls else 0.0


KEY = "op_stats "  # the start of a scope's slot in `trace.derived` (a model cache may fill it)


def op_stats(trace: Trace, scope: Scope | None = None, by_shape: bool = False) -> list[OpStat]:
    """See `_op_stats`; remembered per scope, as the pane and the summary ask again."""
    key = f"{KEY}{scope} {by_shape}"
    return list(trace.derive(key, lambda: _op_stats(trace, scope, by_shape)))


def _op_stats(trace: Trace, scope: Scope | None, by_shape: bool) -> list[OpStat]:
    """Ops aggregated by name (`by_shape`: by name and input shapes, op_shapes.py), most CPU
    time first (the unlaunched GPU work row last).

    Ops are the slices key_averages() counts (CPU ops, annotations, runtime calls); a trace from
    another tool, with none of those categories, has every CPU-lane slice counted. Self time is a
    slice's duration less that of the ops directly inside it (slices that are not ops, such as
    Python frames, are looked through). `ProfilerStep#N` rows fold into `ProfilerStep*`, as in
    torch's table. GPU work counts in the Self CUDA of the op that launched it and in the CUDA
    total of every op enclosing that one.
    """
    s = trace.slices
    tree = op_tree(trace)
    inside = np.zeros(len(s), np.int64)
    child = np.flatnonzero(tree.is_op & (tree.up >= 0))
    np.add.at(inside, tree.up[child], s.dur[child])
    in_scope = scope.rows(trace) if scope is not None else np.ones(len(s), bool)
    picked = np.flatnonzero(tree.is_op & in_scope)
    self_cuda, cuda_total = cuda_totals(trace)
    groups = _name_groups(trace)
    names = groups[s.name[picked]]
    shapes = op_shapes(trace) if by_shape else None
    keys = names * (len(shapes.texts) + 1) + shapes.shape[picked] + 1 if shapes else names
    found, group = np.unique(keys, return_inverse=True)
    n = len(found)

    def total(values: I64) -> F64:
        return np.bincount(group, weights=values[picked], minlength=n).astype(np.float64)

    def least_most(values: I64) -> tuple[I64, ...]:
        least = np.full(n, np.iinfo(np.int64).max, np.int64)
        most = np.zeros(n, np.int64)
        np.minimum.at(least, group, values[picked])
        np.maximum.at(most, group, values[picked])
        return least, most

    calls = np.bincount(group, minlength=n)
    cpu, self_cpu = total(s.dur), total(s.dur - inside)
    own_cuda, all_cuda = total(self_cuda), total(cuda_total)
    cpu_range, cuda_range = least_most(s.dur), least_most(cuda_total)
    mem = op_memory(trace)
    mems = [total(column) for column in (mem.self_cpu, mem.cpu, mem.self_cuda, mem.cuda)]
    labels = _group_labels(trace, groups)
    first = np.zeros(n, np.int64)  # a row of each group: its name and shapes
    first[group] = picked
    python = trace.category_test(is_python_frame)[s.cat[first]]
    stats = [
        OpStat(
            labels[int(groups[s.name[first[g]]])],
            int(calls[g]),
            round(self_cpu[g]),
            round(cpu[g]),
            round(own_cuda[g]),
            round(all_cuda[g]),
            self_cpu_mem=round(mems[0][g]),
            cpu_mem=round(mems[1][g]),
            self_cuda_mem=round(mems[2][g]),
            cuda_mem=round(mems[3][g]),
            shapes=shapes.texts[shapes.shape[first[g]]] if shapes else "",
            cpu_min_ns=int(cpu_range[0][g]),
            cpu_max_ns=int(cpu_range[1][g]),
            cuda_min_ns=int(cuda_range[0][g]),
            cuda_max_ns=int(cuda_range[1][g]),
            python=bool(python[g]),
        )
        for g in range(n)
    ]
    stats.sort(key=lambda o: (-o.cpu_total_ns, o.name, o.shapes))
    unlaunched = _unlaunched(trace, scope)
    if unlaunched.calls:
        stats.append(unlaunched)
    stats += _graph_rows(trace, scope)
    if mem.outside_calls and scope is None:
        cpu_bytes = mem.outside_ops.get("cpu", 0)
        cuda_bytes = sum(v for k, v in mem.outside_ops.items() if k != "cpu")
        stats.append(
            OpStat(
                OUTSIDE_OPS,
                mem.outside_calls,
                0,
                0,
                0,
                0,
                cpu_bytes,
                cpu_bytes,
                cuda_bytes,
                cuda_bytes,
            )
        )
    return stats


def graph_row_name(graph: Graph, launch: str) -> str:
    """The op table's row of a CUDA graph's replays: "[graph #1] hipGraphLaunch: 421 kernels"."""
    return f"[{graph.label}] {launch}: {counted(graph.kernels, 'kernel')}"


def _graph_rows(trace: Trace, scope: Scope | None) -> list[OpStat]:
    """A row per CUDA graph, outside torch's table: its replays launched in the scope, the
    launch calls' CPU time as its CPU total and its kernels' GPU time as its CUDA total. Its
    Self CPU and Self CUDA are 0: that time is already the launch call's and its op's, so the
    table's totals stay torch's."""
    found = graphs(trace)
    if not found.replays:
        return []
    in_scope = scope.rows(trace) if scope is not None else None
    s = trace.slices
    rows = []
    for graph in found.graphs:
        mine = [found.replays[r] for r in graph.replays]
        if in_scope is not None:
            mine = [r for r in mine if in_scope[r.launch]]
        if not mine:
            continue
        gpus = [int(s.dur[r.work].sum()) for r in mine]
        cpus = [int(s.dur[r.launch]) for r in mine]
        name = graph_row_name(graph, trace.slice_name(mine[0].launch))
        rows.append(
            OpStat(
                name, len(mine), 0, sum(cpus), 0, sum(gpus),
                cpu_min_ns=min(cpus), cpu_max_ns=max(cpus),
                cuda_min_ns=min(gpus), cuda_max_ns=max(gpus),
            )
        )  # fmt: skip
    return rows


def _unlaunched(trace: Trace, scope: Scope | None) -> OpStat:
    att = attribute(trace)
    rows = att.work[att.op < 0]
    if scope is not None and scope.root < 0:
        starts = trace.slices.start[rows]
        keep = np.ones(len(rows), bool)
        if scope.t0 is not None:
            keep &= starts >= scope.t0
        if scope.t1 is not None:
            keep &= starts < scope.t1
        rows = rows[keep]
    elif scope is not None:
        rows = rows[:0]  # a subtree launched all of its own work
    gpu = int(trace.slices.dur[rows].sum())
    return OpStat(UNLAUNCHED, len(rows), 0, 0, gpu, gpu)


def _name_groups(trace: Trace) -> I64:
    """Name id -> row id: names are their own rows except the ProfilerStep#N family."""
    ids = np.arange(len(trace.names), dtype=np.int64)
    steps = [i for i, name in enumerate(trace.names) if PROFILER_STEP.match(name)]
    if steps:
        ids[steps] = steps[0]
    return ids


def _group_labels(trace: Trace, groups: I64) -> dict[int, str]:
    labels = {int(g): trace.names[int(g)] for g in np.unique(groups)}
    for g in labels:
        if PROFILER_STEP.match(labels[g]):
            labels[g] = PROFILER_STEP_ROW
    return labels


def op_rows(trace: Trace, name: str) -> I64:
    """The slices counted in the table row called `name`, by start (`ProfilerStep*` is every
    step; the unlaunched GPU work row and the `[memory]` row have no slices)."""
    if name in (UNLAUNCHED, OUTSIDE_OPS):
        return np.zeros(0, np.int64)
    if name.startswith("["):  # a CUDA graph's row: its launch calls
        found = graphs(trace)
        for graph in found.graphs:
            launches = [found.replays[r].launch for r in graph.replays]
            if graph_row_name(graph, trace.slice_name(launches[0])) == name:
                return np.asarray(launches, np.int64)
    step = name == PROFILER_STEP_ROW
    rows = trace.rows_named(PROFILER_STEP.match if step else name.__eq__)
    return rows[np.argsort(trace.slices.start[rows], kind="stable")]
