"""torch.compile's regions: the `Torch-Compiled Region: 0/0` op Dynamo wraps a compiled frame
in, the `## Call CompiledFxGraph <hash> ##` annotation Inductor's wrapper records, and
`CompiledFunction` / its backward, each with the GPU work launched under it (the kernels it
caused, as the op table's CUDA total counts them), so "how much of the step runs compiled code"
has an answer.
"""

from __future__ import annotations

import msgspec
import numpy as np

from tui.model.arrays import I64, Bool

from ..patterns import COMPILED_REGION
from ..trace import Trace
from .attribution import attribute, op_tree
from .steps import step_windows


class RegionLine(msgspec.Struct, frozen=True):
    """One region name: its calls in the window and the GPU work launched under them."""

    name: str
    calls: int
    kernels: int
    gpu_ns: int


class Compiled(msgspec.Struct, frozen=True):
    regions: list[RegionLine]  # most GPU time first
    kernels: int  # GPU work under any region (each counted once)
    gpu_ns: int
    share: float  # of the GPU work launched in the window


def is_region(trace: Trace) -> Bool:
    """Per slice row: whether it is a compiled region (an op named as COMPILED_REGION says);
    found once per trace (the details ask at every selection)."""

    def find() -> Bool:
        named = trace.name_test(COMPILED_REGION.match)
        return named[trace.slices.name] & op_tree(trace).is_op

    return trace.derive("compiled regions", find)


def compiled(trace: Trace, launched_here: Bool | None = None) -> Compiled:
    """The regions over the GPU work whose launch is in the window (`launched_here`, per piece
    of GPU work; None: all of it)."""
    att = attribute(trace)
    s = trace.slices
    here = np.ones(len(att.work), bool) if launched_here is None else launched_here
    region = is_region(trace)
    if not region.any():
        return Compiled([], 0, 0, 0.0)
    up = op_tree(trace).up
    pairs: list[tuple[I64, I64]] = []  # (work index, region)
    at = att.op.copy()
    live = np.flatnonzero((at >= 0) & here)
    while len(live):
        hit = region[at[live]]
        pairs.append((live[hit], at[live[hit]]))
        at[live] = up[at[live]]
        live = live[at[live] >= 0]
    work = np.concatenate([p[0] for p in pairs]) if pairs else np.zeros(0, np.int64)
    rows = np.concatenate([p[1] for p in pairs]) if pairs else np.zeros(0, np.int64)
    dur = s.dur[att.work]
    lines = []
    names = s.name[rows]
    for name in np.unique(names).tolist():
        mine = names == name
        pieces = np.unique(work[mine])
        lines.append(
            RegionLine(
                trace.names[name],
                len(np.unique(rows[mine])),
                len(pieces),
                int(dur[pieces].sum()),
            )
        )
    lines.sort(key=lambda r: (-r.gpu_ns, r.name))
    covered = np.unique(work)
    total = int(dur[here].sum())
    gpu = int(dur[covered].sum())
    return Compiled(lines, len(covered), gpu, gpu / total if total else 0.0)


def under_region(trace: Trace, row: int) -> tuple[int, int, float, str] | None:
    """For a region slice: (pieces of GPU work launched under it, their time, their share of
    the GPU work launched in its step or, outside steps, in the trace, and which of the two);
    None otherwise."""
    if not is_region(trace)[row]:
        return None
    att = attribute(trace)
    s = trace.slices
    up = op_tree(trace).up
    at = att.op.copy()
    under = np.zeros(len(att.work), bool)
    live = np.flatnonzero(at >= 0)
    while len(live):
        under[live[at[live] == row]] = True
        at[live] = up[at[live]]
        live = live[at[live] >= 0]
    gpu = int(s.dur[att.work[under]].sum())
    start = int(s.start[row])
    step = next(((n, a, b) for n, a, b in step_windows(trace) if a <= start < b), None)
    launch_start = s.start[np.maximum(att.launch, 0)]
    launched = att.launch >= 0
    if step is not None:
        launched &= (launch_start >= step[1]) & (launch_start < step[2])
    total = int(s.dur[att.work[launched]].sum())
    return int(under.sum()), gpu, gpu / total if total else 0.0, step[0] if step else "the trace"
