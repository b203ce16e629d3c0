"""A rank's collectives: each communication kernel with its kind, process group, size and time.

What a collective is and moves comes from the first of: the kernel's own args (newer Kineto
copies `Collective name`, `In msg nelems`, `dtype`, `Process Group Name` onto it), the
`record_param_comms` op around its launch, or the `nccl:<kind>` annotation around its launch
(`Input Dims` and `Input type`). The kind falls back to the kernel's name
(`ncclDevKernel_AllGather_RING_LL` -> allgather, `cross_device_reduce_1stage` -> allreduce,
DeepEP's `dispatch` and `combine` -> alltoall), then to its op's (`symm_mem::one_shot_all_reduce`).
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

import msgspec
import numpy as np

from ..intervals import merge
from ..patterns import COLLECTIVE_ANNOTATION_KIND, COLLECTIVE_KERNEL_KIND, COLLECTIVE_NAME_KIND
from ..trace import Trace
from .attribution import attribute
from .gpu_time import COMM, COMPUTE, work_class

# Bytes per element of the dtypes torch writes in the comms args ("Float", "BFloat16") and in
# `Input type` ("float", "c10::BFloat16").
_DTYPE_BYTES = {
    "float": 4,
    "float32": 4,
    "double": 8,
    "float64": 8,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "int": 4,
    "int32": 4,
    "long": 8,
    "int64": 8,
    "short": 2,
    "int16": 2,
    "char": 1,
    "byte": 1,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
}


class Collective(msgspec.Struct, frozen=True):
    """One communication kernel on one rank (times in ns from the trace's start)."""

    kind: str  # allreduce, allgather, reduce_scatter, alltoall, broadcast, sendrecv, ...
    group: str  # the process group's name ("" when the trace does not say)
    seq: int | None  # the process group's sequence number, where the trace carries it
    start_ns: int
    dur_ns: int
    bytes: int | None  # the collective's size as nccl-tests counts it (None: not in the args)
    group_size: int | None


def normalise_kind(text: str) -> str:
    """`all_reduce`, `AllReduce`, `_allgather_base` -> allreduce, allgather."""
    kind = text.strip().lower().strip("_").removesuffix("_base").removesuffix("_coalesced")
    kind = kind.replace("all_to_all", "alltoall").replace("_", "")
    return {"reducescatter": "reduce_scatter", "reducescatterv": "reduce_scatter"}.get(kind, kind)


KEY = "collectives"  # its slot in `trace.derived` (a model cache may fill it)


def collectives(trace: Trace) -> list[Collective]:
    """The trace's communication kernels, by start (computed once per trace content: what they
    are is read from the kernels' and their ops' args)."""
    return trace.derive(KEY, lambda: _collectives(trace))


def communication_rows(trace: Trace) -> np.ndarray:
    """The slice rows of the trace's communication kernels, in no set order."""
    return np.asarray(attribute(trace).work[np.flatnonzero(work_class(trace) == COMM)])


def _collectives(trace: Trace) -> list[Collective]:
    s = trace.slices
    att = attribute(trace)
    comm = np.flatnonzero(work_class(trace) == COMM)
    comm = comm[np.argsort(s.start[att.work[comm]], kind="stable")]
    out = []
    for i in comm.tolist():
        row = int(att.work[i])
        found = _described(trace, row, int(att.launch[i]))
        name = trace.slice_name(row)
        op = int(att.op[i])
        kind = found.get("kind") or _kind_from_names(name, trace.slice_name(op) if op >= 0 else "")
        out.append(
            Collective(
                kind,
                found.get("group", ""),
                found.get("seq"),
                int(s.start[row]),
                int(s.dur[row]),
                found.get("bytes"),
                found.get("group_size"),
            )
        )
    return out


def _kind_from_names(kernel: str, op: str) -> str:
    """The collective a kernel's name says it runs, else its op's name (else the name)."""
    if match := COLLECTIVE_KERNEL_KIND.search(kernel):
        return normalise_kind(match.group(1))
    for name in (kernel, op):
        if match := COLLECTIVE_NAME_KIND.search(name):
            word = normalise_kind(match.group(1))
            return _WORD_KIND.get(word, word)
    return kernel.split("(")[0]


# Words in kernel names for the collective they run.
_WORD_KIND = {
    "crossdevicereduce": "allreduce",
    "quickreduce": "allreduce",
    "dispatch": "alltoall",
    "combine": "alltoall",
}


def _described(trace: Trace, kernel: int, launch: int) -> dict[str, Any]:
    """What the args say of the collective: the kernel's, then the ops around its launch."""
    found: dict[str, Any] = {}
    _read_comms_args(trace.args_reader.args(int(trace.slices.event[kernel])), found)
    s = trace.slices
    up = launch
    while up >= 0 and not {"kind", "bytes"} <= found.keys():
        name = trace.slice_name(up)
        if name == "record_param_comms":
            _read_comms_args(trace.args_reader.args(int(s.event[up])), found)
        elif match := COLLECTIVE_ANNOTATION_KIND.match(name):
            found.setdefault("kind", normalise_kind(match.group(1)))
            _read_input_size(trace.args_reader.args(int(s.event[up])), found)
        up = int(s.parent[up])
    return found


def _read_comms_args(args: Any, found: dict[str, Any]) -> None:
    if not isinstance(args, dict):
        return
    if isinstance(args.get("Collective name"), str) and args["Collective name"]:
        found.setdefault("kind", normalise_kind(args["Collective name"]))
    if args.get("Process Group Name") not in (None, ""):
        found.setdefault("group", str(args["Process Group Name"]))
    if _int64(args.get("Seq")):
        found.setdefault("seq", args["Seq"])
    if _int64(args.get("Group size")):
        found.setdefault("group_size", args["Group size"])
    elements = [args.get(k) for k in ("In msg nelems", "Out msg nelems")]
    counts = [n for n in elements if _int64(n) and n >= 0]
    size = _DTYPE_BYTES.get(str(args.get("dtype", "")).lower())
    if counts and size and _int64(max(counts) * size):
        # nccl-tests' size: the larger buffer (all-gather's output, reduce-scatter's input).
        found.setdefault("bytes", max(counts) * size)


def _int64(value: Any) -> TypeGuard[int]:
    """A whole number (not a bool) that int64 holds: beyond it, no value is kept (the model
    cache's facts cannot hold one, and no real count is that large)."""
    return type(value) is int and -(1 << 63) <= value < 1 << 63


def _read_input_size(args: Any, found: dict[str, Any]) -> None:
    if not isinstance(args, dict) or "bytes" in found:
        return
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not (isinstance(dims, list) and isinstance(types, list) and dims and types):
        return
    shape, dtype = dims[0], str(types[0]).lower().removeprefix("c10::")
    size = _DTYPE_BYTES.get(dtype)
    if size and isinstance(shape, list) and all(isinstance(d, int) for d in shape):
        found["bytes"] = math.prod(shape) * size


class ExposedKind(msgspec.Struct, frozen=True):
    """One kind of collective's communication with no computation beside it, in a window."""

    kind: str
    calls: int
    exposed_ns: int
    most: int  # slice row of the kernel with the most exposed time


def exposed_by_kind(trace: Trace, t0: int, t1: int) -> list[ExposedKind]:
    """The collectives that started in [t0, t1) by kind, most exposed time first; each
    kernel's exposed time is its time while no computation runs (gpu_time.py)."""
    s = trace.slices
    att = attribute(trace)
    starts = s.start[att.work]
    window = (starts >= t0) & (starts < t1)
    cls = work_class(trace)
    comm = np.flatnonzero(window & (cls == COMM))
    if not len(comm):
        return []
    compute = att.work[np.flatnonzero(window & (cls == COMPUTE))]
    order = np.argsort(s.start[compute], kind="stable")
    u_start, u_end = merge(s.start[compute][order], s.end[compute][order])
    rows = att.work[comm]
    overlap = _union_before(u_start, u_end, s.end[rows]) - _union_before(
        u_start, u_end, s.start[rows]
    )
    exposed = s.dur[rows] - overlap
    found: dict[str, list[tuple[int, int]]] = {}
    for i, row, ns in zip(comm.tolist(), rows.tolist(), exposed.tolist(), strict=True):
        kind = _kind_from_names_only(trace, row, int(att.launch[i]), int(att.op[i]))
        found.setdefault(kind, []).append((row, ns))
    out = [
        ExposedKind(kind, len(v), sum(ns for _, ns in v), max(v, key=lambda x: x[1])[0])
        for kind, v in found.items()
    ]
    return sorted(out, key=lambda e: (-e.exposed_ns, e.kind))


def _kind_from_names_only(trace: Trace, kernel: int, launch: int, op: int) -> str:
    """The kind as the names tell it, with no args read (collectives() decodes each kernel's):
    the `nccl:<kind>` annotation around the launch (NCCL runs every kind as SendRecv kernels
    on some builds), else the kernel's and its op's names."""
    s = trace.slices
    at = launch
    while at >= 0:
        if match := COLLECTIVE_ANNOTATION_KIND.match(trace.slice_name(at)):
            return normalise_kind(match.group(1))
        at = int(s.parent[at])
    return _kind_from_names(trace.slice_name(kernel), trace.slice_name(op) if op >= 0 else "")


def _union_before(u_start: np.ndarray, u_end: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The time sorted disjoint intervals cover before each time in `t`."""
    if not len(u_start):
        return np.zeros(len(t), np.int64)
    before = np.concatenate(([0], np.cumsum(u_end - u_start)))
    k = np.searchsorted(u_start, t, side="right")
    last = np.maximum(k - 1, 0)
    inside = np.clip(t - u_start[last], 0, u_end[last] - u_start[last])
    return np.asarray(np.where(k > 0, before[last] + inside, 0), np.int64)
