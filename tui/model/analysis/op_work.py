"""The roofline's numbers per row of the op and kernel tables, over any scope: the FLOPs and
bytes of the modelled calls (roofline.py), the GPU time of their kernels, and the time they would
take at their roofs, so a row's TFLOP/s and % of roof are those of its calls taken together.

An op row counts the modelled calls of that name. A kernel row counts only the kernels that
were the one piece of GPU work of a modelled call (memsets aside): a call that ran two kernels
(a GEMM and its split-K reduction, a backward pass of three) has FLOPs that cannot be split
between them without guessing, so those kernels get none, and the op row still has them.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import numpy as np

from tui.model.arrays import F64, I64, Bool

from ..trace import Trace
from .attribution import attribute, cuda_totals, op_tree
from .kernels import work_in_scope
from .op_shapes import op_shapes
from .roofline import Roofline
from .scope import Scope


class WorkTotals(msgspec.Struct, frozen=True):
    """The modelled calls of one table row."""

    flops: int
    bytes: int
    gpu_ns: int  # their kernels' time
    roof_ns: float  # the time they would take at their roofs (those with a known roof)
    judged_ns: int  # the kernel time of the calls with a known roof
    compute_ns: int  # of judged_ns, that of calls on the compute side of the roofline
    # The kernel time of calls whose by-shape row ran faster than its roof allows (an assumption
    # failed: roofline.Roofline.above_roof); they are not judged.
    above_ns: int = 0

    @property
    def tflops(self) -> float | None:
        return self.flops / self.gpu_ns / 1e3 if self.gpu_ns else None

    @property
    def percent_of_roof(self) -> float | None:
        """The share of the roof; None where none is known or the calls, taken together in
        this scope, ran faster than their roofs allow."""
        share = 100.0 * self.roof_ns / self.judged_ns if self.judged_ns else None
        return share if share is not None and share <= 100.0 else None

    @property
    def above_roof(self) -> bool:
        """Whether the judged calls ran faster than their roofs allow, or only calls of rows
        that did were left to judge."""
        if self.judged_ns:
            return 100.0 * self.roof_ns / self.judged_ns > 100.0
        return self.above_ns > 0

    @property
    def bound(self) -> str | None:
        """The side of the roofline most of the judged time sits on."""
        if not self.judged_ns:
            return None
        return "compute" if 2 * self.compute_ns >= self.judged_ns else "memory"


class _Calls(msgspec.Struct, frozen=True):
    """Per modelled call (roofline order)."""

    flops: F64
    bytes: F64
    roof_ns: F64  # NaN: no roof known, or the call's row ran faster than its roof allows
    compute: Bool
    above: Bool  # the call's row ran faster than its roof allows


def _calls(r: Roofline) -> _Calls:
    groups = r.call_group
    flops = np.asarray([row.work.flops for row in r.rows], np.float64)
    nbytes = np.asarray([row.work.bytes for row in r.rows], np.float64)
    roofs = [r.roof(row.work) for row in r.rows]
    above = np.asarray([r.above_roof(row) is not None for row in r.rows], np.bool_)
    roof_ns = np.asarray([x[0] if x else np.nan for x in roofs], np.float64)
    roof_ns[above] = np.nan
    compute = np.asarray([x is not None and x[1] == "compute" for x in roofs], np.bool_)
    return _Calls(flops[groups], nbytes[groups], roof_ns[groups], compute[groups], above[groups])


def op_work(
    trace: Trace, r: Roofline, scope: Scope | None = None, by_shape: bool = False
) -> dict[str, WorkTotals]:
    """Op row key (`OpStat.key`: the name, `by_shape` with the input shapes) -> its modelled
    calls that start in the scope."""
    calls = _calls(r)
    rows = r.call_rows
    keep = scope.rows(trace)[rows] if scope is not None else np.ones(len(rows), bool)
    gpu = cuda_totals(trace)[1][rows].astype(np.float64)
    keep &= gpu > 0  # a call that ran no kernel computed nothing in this trace
    names = trace.slices.name[rows].astype(np.int64)
    if not by_shape:
        return _totals(names[keep], calls, gpu, keep, trace.names.__getitem__)
    shapes = op_shapes(trace)
    width = len(shapes.texts)
    ids = names * width + shapes.shape[rows]

    def label(key: int) -> str:
        return f"{trace.names[key // width]}\x00{shapes.texts[key % width]}"

    return _totals(ids[keep], calls, gpu, keep, label)


def kernel_work(trace: Trace, r: Roofline, scope: Scope | None = None) -> dict[str, WorkTotals]:
    """Kernel name -> the kernels in the scope that were a modelled call's only GPU work."""
    att = attribute(trace)
    call = _call_of_work(trace, r)
    # A memset beside a GEMM's kernel (cuBLAS clears its workspace) does no FLOPs: it is left
    # out, so the GEMM kernel is still its call's only GPU work.
    memset = trace.category_test(lambda c: "memset" in c.lower())
    call[memset[trace.slices.cat[att.work]]] = -1
    counts = np.bincount(call[call >= 0], minlength=len(r.call_rows))
    sole = (call >= 0) & (counts[np.maximum(call, 0)] == 1)
    if scope is not None:
        sole &= work_in_scope(trace, scope)
    picked = call[sole]
    calls = _calls(r)
    gpu = np.zeros(len(r.call_rows), np.float64)
    gpu[picked] = trace.slices.dur[att.work[sole]]
    keep = np.zeros(len(r.call_rows), bool)
    keep[picked] = True
    names = np.full(len(r.call_rows), -1, np.int64)
    names[picked] = trace.slices.name[att.work[sole]]
    return _totals(names[keep], calls, gpu, keep, trace.names.__getitem__)


def _call_of_work(trace: Trace, r: Roofline) -> I64:
    """For each piece of GPU work, the modelled call it ran for (an index into the roofline's
    calls; -1: none): the first modelled op met walking up from its launching op."""
    att = attribute(trace)
    up = op_tree(trace).up
    index = np.full(len(trace.slices), -1, np.int64)
    index[r.call_rows] = np.arange(len(r.call_rows))
    found = np.full(len(att.work), -1, np.int64)
    at = att.op.copy()
    live = np.flatnonzero(at >= 0)
    while len(live):
        hit = index[at[live]]
        found[live] = hit
        live = live[hit < 0]
        at[live] = up[at[live]]
        live = live[at[live] >= 0]
    return found


def _totals(
    names: I64,
    calls: _Calls,
    gpu: F64,
    keep: Bool,
    label: Callable[[int], str],
) -> dict[str, WorkTotals]:
    flops, nbytes, gpu = calls.flops[keep], calls.bytes[keep], gpu[keep]
    roof, compute, above = calls.roof_ns[keep], calls.compute[keep], calls.above[keep]
    judged = ~np.isnan(roof)
    ids, group = np.unique(names, return_inverse=True)

    def total(values: F64) -> F64:
        return np.bincount(group, weights=values, minlength=len(ids)).astype(np.float64)

    f, b, g = total(flops), total(nbytes), total(gpu)
    rn, jn = total(np.where(judged, roof, 0.0)), total(np.where(judged, gpu, 0.0))
    cn = total(np.where(judged & compute, gpu, 0.0))
    an = total(np.where(above, gpu, 0.0))
    return {
        label(int(name)): WorkTotals(
            round(f[i]),
            round(b[i]),
            round(g[i]),
            float(rn[i]),
            round(jn[i]),
            round(cn[i]),
            round(an[i]),
        )
        for i, name in enumerate(ids.tolist())
    }
