"""Memory from Kineto's `[memory]` records: series per device, per-op columns, peaks.

Each record is one allocation (positive `Bytes`) or free (negative) on a device, with the
device's `Total Allocated` and `Total Reserved` after it. As in torch's `key_averages()`, a
record counts in the Self memory of the innermost op running on its thread at that moment and in
the total of every op around it; records outside any op go to a `[memory]` row of their own.
"""

from __future__ import annotations

import msgspec
import numpy as np

from tui.model.arrays import I64, Bool

from ..intervals import bind
from ..trace import CounterSeries, MemoryEvents, Trace
from .attribution import op_tree

CPU, CUDA = 0, 1
OUTSIDE_OPS = "[memory]"


# c10's DeviceType numbers of the devices a profiler records memory on, as torch names them
# (`hip` for ROCm builds, which record their GPUs' memory as HIP, not CUDA).
DEVICE_KINDS = {
    CUDA: "cuda",
    6: "hip",
    8: "maia",
    9: "xla",
    12: "xpu",
    13: "mps",
    15: "hpu",
    19: "mtia",
    20: "privateuseone",
}


def device_name(device_type: int, device_id: int) -> str:
    """`cpu`, `cuda:0`, `hip:0`, or the c10 device type number for one not known here."""
    if device_type == CPU:
        return "cpu"
    kind = DEVICE_KINDS.get(device_type, f"device{device_type}")
    return f"{kind}:{max(device_id, 0)}"


def devices(memory: MemoryEvents) -> list[tuple[int, int]]:
    """The (device type, id) pairs that have records, CPU first."""
    pairs = {
        (int(t), int(i) if t != CPU else -1)
        for t, i in zip(memory.device_type, memory.device_id, strict=True)
    }
    return sorted(pairs)


def _mask(memory: MemoryEvents, device: tuple[int, int]) -> Bool:
    t, i = device
    mask: Bool = memory.device_type == t
    return mask if t == CPU else mask & (memory.device_id == i)


def counter_series(trace: Trace) -> list[CounterSeries]:
    """The file's counters, then the allocator's series (computed once per trace)."""
    return trace.derive("counter_series", lambda: trace.counters + memory_series(trace))


def memory_series(trace: Trace) -> list[CounterSeries]:
    """Allocated and reserved bytes over time, one pair of series per device.

    A CUDA device's series sit under the GPU process of that index when the trace has one,
    else under the process that allocated.
    """
    memory = trace.memory
    process_of_lane = np.asarray([lane.process for lane in trace.lanes], np.int64)
    out = []
    gpu_process = {p.pid: p.index for p in trace.processes if p.is_device}
    for device in devices(memory):
        mask = _mask(memory, device)
        first_lane = int(memory.lane[np.flatnonzero(mask)[0]])
        process = int(process_of_lane[first_lane]) if first_lane >= 0 else -1
        if device[0] != CPU and device[1] in gpu_process:
            process = gpu_process[device[1]]
        name = device_name(*device)
        ts = memory.ts[mask]
        out.append(
            CounterSeries(
                process, f"{name} allocated", ts, memory.allocated[mask].astype(np.float64)
            )
        )
        out.append(
            CounterSeries(process, f"{name} reserved", ts, memory.reserved[mask].astype(np.float64))
        )
    return out


class OpMemory(msgspec.Struct, frozen=True):
    """Per slice row: bytes its records added (self) and its subtree's (total), by device."""

    self_cpu: I64
    cpu: I64
    self_cuda: I64
    cuda: I64
    outside_ops: dict[str, int]  # device -> bytes of records outside any op
    outside_calls: int


def op_memory(trace: Trace) -> OpMemory:
    """Computed once per trace."""
    return trace.derive("op_memory", lambda: _op_memory(trace))


def _op_memory(trace: Trace) -> OpMemory:
    m = trace.memory
    tree = op_tree(trace)
    n = len(trace.slices)
    op = _op_at_records(trace)
    columns = []
    for device_is_cpu in (True, False):
        pick = (m.device_type == CPU) if device_is_cpu else (m.device_type != CPU)
        pick &= op >= 0
        own = np.zeros(n, np.int64)
        np.add.at(own, op[pick], m.bytes[pick])
        total = own.copy()
        at, amount = tree.up[op[pick]], m.bytes[pick]
        while len(at):
            keep = at >= 0
            at, amount = at[keep], amount[keep]
            np.add.at(total, at, amount)
            at = tree.up[at]
        columns += [own, total]
    outside = op < 0
    by_device = {
        device_name(int(t), int(i)): 0
        for t, i in zip(m.device_type[outside], m.device_id[outside], strict=True)
    }
    for t, i, b in zip(m.device_type[outside], m.device_id[outside], m.bytes[outside], strict=True):
        by_device[device_name(int(t), int(i))] += int(b)
    self_cpu, cpu, self_cuda, cuda = columns
    return OpMemory(self_cpu, cpu, self_cuda, cuda, by_device, int(outside.sum()))


class Peak(msgspec.Struct, frozen=True):
    """A device's highest allocated (and reserved) memory and when it happened."""

    device: str
    allocated: int
    reserved: int
    ts: int  # of the record that reached the peak allocated (or the window's start, if before)
    op: int  # the op running then on the allocating thread (-1: none)


def peaks(trace: Trace, t0: int | None = None, t1: int | None = None) -> list[Peak]:
    """Each device's peak in [t0, t1) (default: the whole trace): its records there, and the
    last one before t0, whose level holds at t0. A device with neither is left out."""
    m = trace.memory
    out = []
    ops = _op_at_records(trace)
    for device in devices(m):
        rows = np.flatnonzero(_mask(m, device))
        if t0 is not None and t1 is not None:
            before = rows[m.ts[rows] < t0]
            carried = before[np.argsort(m.ts[before], kind="stable")[-1:]]
            rows = np.concatenate([carried, rows[(m.ts[rows] >= t0) & (m.ts[rows] < t1)]])
            if len(rows) == 0:
                continue
        top = rows[int(np.argmax(m.allocated[rows]))]
        out.append(
            Peak(
                device_name(*device),
                int(m.allocated[top]),
                int(m.reserved[rows].max()),
                int(m.ts[top]) if t0 is None else max(int(m.ts[top]), t0),
                # A level carried into the window was reached by an op before it: none here.
                int(ops[top]) if t0 is None or m.ts[top] >= t0 else -1,
            )
        )
    return out


def _op_at_records(trace: Trace) -> I64:
    """The innermost op running on the allocating thread at each record (-1: none): the
    enclosing slice if it is an op, else its nearest op ancestor (computed once per trace)."""
    return trace.derive("op_at_records", lambda: _bind_records(trace))


def _bind_records(trace: Trace) -> I64:
    m, s = trace.memory, trace.slices
    if len(m) == 0:
        return np.zeros(0, np.int64)
    tree = op_tree(trace)
    lane_lo = np.asarray([lane.lo for lane in trace.lanes] + [0], np.int64)
    lane_hi = np.asarray([lane.hi for lane in trace.lanes] + [0], np.int64)
    lane = np.where(m.lane >= 0, m.lane, len(trace.lanes)).astype(np.int64)
    inner = bind(
        lane,
        m.ts,
        np.ones(len(m), bool),
        lane_lo,
        lane_hi,
        s.start,
        s.end,
        s.parent.astype(np.int64),
    )
    return np.where(
        inner >= 0,
        np.where(tree.is_op[np.maximum(inner, 0)], inner, tree.up[np.maximum(inner, 0)]),
        -1,
    )
