"""What the kernels an op launched say of it, per slice row: that it copied across the host
link (no HBM roof applies), or ran its fp32 math as TF32 on tensor cores."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from msgspec.structs import replace

from ..patterns import HOST_COPY, TF32_KERNEL
from ..trace import Trace
from .attribution import attribute, op_tree
from .work import CONV, DTYPE_CLASS, GEMM, Work


def host_copies(trace: Trace) -> np.ndarray:
    """Per slice row: whether it is the op that launched a copy to or from the host, or holds
    that op (once per trace)."""
    return trace.derive("host_copies", lambda: _find_host_copies(trace))


def _find_host_copies(trace: Trace) -> np.ndarray:
    return _holds_work_named(trace, HOST_COPY.search)


def _ran_tf32(trace: Trace) -> np.ndarray:
    """Per slice row: whether it is or holds the op that launched a TF32 kernel (once)."""
    return trace.derive("ran tf32", lambda: _holds_work_named(trace, TF32_KERNEL.search))


def with_math(trace: Trace, row: int, work: Work) -> Work:
    """`work` with the math mode its kernels ran in (TF32 for an fp32 GEMM on tensor cores)."""
    if (
        DTYPE_CLASS.get(work.dtype) == "fp32"
        and work.kind in (GEMM, CONV)
        and _ran_tf32(trace)[row]
    ):
        return replace(work, math="tf32")
    return work


def _holds_work_named(trace: Trace, named: Callable[[str], object]) -> np.ndarray:
    att = attribute(trace)
    names = trace.slices.name[att.work]
    at = att.op[trace.name_test(named, names)[names] & (att.op >= 0)]
    marked = np.zeros(len(trace.slices), bool)
    up = op_tree(trace).up
    while len(at):
        marked[at] = True
        at = up[at]
        at = at[at >= 0]
    return marked
