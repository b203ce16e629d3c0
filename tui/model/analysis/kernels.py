"""The kernel table: GPU work by name, with launch geometry from the first instance's args."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import numpy as np

from ..trace import Trace
from .attribution import attribute
from .graphs import graphs
from .scope import Scope
from .tensor_cores import uses_tensor_cores

if TYPE_CHECKING:
    from .op_work import WorkTotals

# Args Kineto writes on kernels, as shown in the table.
GEOMETRY = {
    "grid": "grid",
    "block": "block",
    "registers per thread": "registers",
    "shared memory": "shared mem",
    "est. achieved occupancy %": "occupancy %",
}
# What Inductor writes on a Triton kernel's launcher event (the op that launched it).
TRITON_CONFIG = {"num_warps": "warps", "num_stages": "stages", "kernel_kwargs": "config"}


class KernelStat(msgspec.Struct, frozen=True):
    """One kernel (or memcpy/memset) name and its durations (ns)."""

    name: str
    calls: int
    total_ns: int
    min_ns: int
    max_ns: int
    share: float  # of all GPU work time in the scope
    geometry: dict[str, str]
    work: WorkTotals | None = None  # the modelled calls' FLOPs and roof (op_work.py)
    graphs: tuple[str, ...] = ()  # the CUDA graphs its instances were replayed in (graphs.py)
    graphed: int = 0  # its instances that ran in a graph replay
    tensor_cores: bool | None = None  # a GEMM or convolution on tensor cores (None: neither)

    @property
    def key(self) -> str:
        return self.name

    @property
    def avg_ns(self) -> float:
        return self.total_ns / self.calls if self.calls else 0.0


def kernel_stats(trace: Trace, scope: Scope | None = None) -> list[KernelStat]:
    """GPU work aggregated by name, most time first; remembered per scope, as `op_stats`."""
    return list(trace.derive(f"kernel_stats {scope}", lambda: _kernel_stats(trace, scope)))


def _kernel_stats(trace: Trace, scope: Scope | None) -> list[KernelStat]:
    s = trace.slices
    rows = attribute(trace).work
    if scope is not None:
        rows = rows[work_in_scope(trace, scope)]
    if len(rows) == 0:
        return []
    names, dur = s.name[rows].astype(np.int64), s.dur[rows]
    order = np.lexsort((dur, names))
    names, dur, rows = names[order], dur[order], rows[order]
    starts = np.flatnonzero(np.concatenate(([True], names[1:] != names[:-1])))
    ends = np.concatenate((starts[1:], [len(names)]))
    everything = int(dur.sum())
    found = graphs(trace)
    graph_of = found.graph_of[rows]
    out = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        total = int(dur[a:b].sum())
        first = int(rows[a:b][np.argmin(s.start[rows[a:b]])])
        name = trace.names[int(names[a])]
        out.append(
            KernelStat(
                name,
                b - a,
                total,
                int(dur[a]),
                int(dur[b - 1]),
                total / everything if everything else 0.0,
                _geometry(trace, first),
                graphs=tuple(found.graphs[g].label for g in np.unique(graph_of[a:b]) if g >= 0),
                graphed=int((graph_of[a:b] >= 0).sum()),
                tensor_cores=uses_tensor_cores(name),
            )
        )
    out.sort(key=lambda k: (-k.total_ns, k.name))
    return out


def work_in_scope(trace: Trace, scope: Scope) -> np.ndarray:
    """Which GPU work (`attribute(trace).work`) a scope's kernel table counts: that starting in
    its window, or, under a slice, that launched from its subtree."""
    att = attribute(trace)
    in_scope = scope.rows(trace)
    if scope.root < 0:
        return in_scope[att.work]
    return (att.op >= 0) & in_scope[np.maximum(att.op, 0)]


def _geometry(trace: Trace, row: int) -> dict[str, str]:
    """Launch geometry from the kernel's args, and the Triton config from its launcher's."""
    args = trace.args(row)
    out = {}
    if isinstance(args, dict):
        out = {label: _short(args[key]) for key, label in GEOMETRY.items() if key in args}
    launcher = int(launch_op(trace)[row])
    if launcher >= 0 and trace.slice_name(launcher).startswith("triton_"):
        config = trace.args(launcher)
        if isinstance(config, dict):
            out |= {label: _short(config[k]) for k, label in TRITON_CONFIG.items() if k in config}
    return out


def launch_op(trace: Trace) -> np.ndarray:
    """Per slice row: the op charged with that GPU work (-1: none, or not GPU work)."""

    def find() -> np.ndarray:
        att = attribute(trace)
        out = np.full(len(trace.slices), -1, np.int64)
        out[att.work] = att.op
        return out

    return trace.derive("launch_op", find)


def _short(value: object) -> str:
    if isinstance(value, list):
        return "x".join(str(v) for v in value)
    return str(value)
