"""How close to the hardware: the ops the performance model knows (perf_model.py), grouped by
name and input shapes (as `key_averages(group_by_input_shape=True)` groups them), with the GPU
time of the kernels each call caused, achieved TFLOP/s and TB/s, and the share of the device's
peak (device_peaks.py) on the side of the roofline the op sits on.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

import msgspec
import numpy as np

from ..trace import Trace
from . import serving_work
from .attribution import attribute, cuda_totals, op_tree
from .device_peaks import Peaks, peaks_for
from .iterations import Iteration, iterations
from .op_kernels import host_copies, with_math
from .perf_model import TRITON_PREFIX, knows, work_of
from .work import DTYPE_CLASS, Work

SHAPES_BATCH = 32768  # events whose shape args are read at a time


# What each failed assumption means, for the line under the table and the JSON.
ABOVE_ROOF = {
    "HBM bandwidth": (
        "faster than HBM bandwidth allows: the bytes did not all cross HBM (a small operand"
        " stayed in L2, an in-place op reread what it wrote) or the device is not the one named"
    ),
    "peak": (
        "faster than the precision's peak allows: the math ran in another precision (TF32,"
        " fp8, sparsity) or the model counts FLOPs that did not run"
    ),
}


def above_roof_reason(failed: str) -> str:
    """The sentence for a failed assumption `Roofline.above_roof` named."""
    return ABOVE_ROOF["HBM bandwidth" if failed == "HBM bandwidth" else "peak"]


class ShapeRow(msgspec.Struct, frozen=True):
    """One op name with one set of input shapes: its calls and what they computed."""

    name: str
    dims: str  # Input Dims as written
    work: Work  # one call's
    calls: int
    gpu_ns: int  # the kernels the calls caused, summed
    min_ns: int
    max_ns: int
    starts: tuple[int, ...] = ()  # when each call that ran kernels began (ns), in time order
    concrete: str = "[]"  # Concrete Inputs as written (scalars, flags: part of the shape key)
    types: str = "[]"  # Input type as written (a copy to bf16 and one to fp32 are two rows)
    idle_calls: int = 0  # calls that ran no kernel (captured into a CUDA graph, say)

    @property
    def ran(self) -> int:
        """The calls that ran kernels: FLOPs, bytes and rates are theirs."""
        return self.calls - self.idle_calls

    @property
    def flops(self) -> int:
        return self.work.flops * self.ran

    @property
    def bytes(self) -> int:
        return self.work.bytes * self.ran

    @property
    def tflops(self) -> float | None:
        """Achieved TFLOP/s: the calls' FLOPs over their kernels' time."""
        return self.flops / self.gpu_ns / 1e3 if self.gpu_ns else None

    @property
    def tbs(self) -> float | None:
        return self.bytes / self.gpu_ns / 1e3 if self.gpu_ns else None


class KindTotal(msgspec.Struct, frozen=True):
    kind: str
    flops: int
    gpu_ns: int
    percent_of_roof: float | None  # weighted by kernel time
    bound: str | None  # the side most of its time sits on

    @property
    def tflops(self) -> float | None:
        return self.flops / self.gpu_ns / 1e3 if self.gpu_ns else None


class Utilisation(msgspec.Struct, frozen=True):
    """A window's model FLOPs and model FLOPs utilisation."""

    name: str
    window_ns: int
    flops: int
    tflops: float | None
    mfu: float | None  # 0..1


class Roofline(msgspec.Struct, frozen=True, eq=False):
    # Equal only to itself: its arrays have no single truth value to compare by.
    rows: list[ShapeRow]  # most GPU time first
    peaks: Peaks | None
    shapes_recorded: bool  # whether any op carries Input Dims (record_shapes=True)
    # Each modelled call: its slice row and the index of its row in `rows` (for the op and
    # kernel tables' columns, taken over any scope).
    call_rows: np.ndarray = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    call_group: np.ndarray = msgspec.field(default_factory=lambda: np.zeros(0, np.int64))
    # Graph replays (replay_work.py): how many took their ops' work from a capture, and the GPU
    # time of those that found none (unmodelled: no op holds their kernels).
    replays_matched: int = 0
    replays_unmatched_ns: int = 0
    replays_unmatched_share: float = 0.0  # of all GPU work time

    @property
    def ran(self) -> list[ShapeRow]:
        """The rows whose calls ran kernels: a call captured into a CUDA graph, or one that
        launched nothing, computed nothing in this trace's time, so rates and MFU leave it out."""
        return [row for row in self.rows if row.ran]

    def by_kind(self) -> list[KindTotal]:
        """GEMMs, attention, elementwise: their FLOPs, kernel time and rate, and how close to
        their roofs they ran (weighted by kernel time), most time first."""
        totals: dict[str, list[float]] = {}
        for row in self.ran:
            t = totals.setdefault(row.work.kind, [0, 0, 0.0, 0.0, 0.0])
            t[0] += row.flops
            t[1] += row.gpu_ns
            share = self.percent_of_peak(row)
            if share is not None:
                t[2] += share[0] * row.gpu_ns
                t[3 if share[1] == "compute" else 4] += row.gpu_ns
        out = []
        for kind, (flops, gpu, weighted, compute, memory) in totals.items():
            shared = compute + memory
            out.append(
                KindTotal(
                    kind,
                    int(flops),
                    int(gpu),
                    weighted / shared if shared else None,
                    ("compute" if compute >= memory else "memory") if shared else None,
                )
            )
        out.sort(key=lambda k: -k.gpu_ns)
        return out

    def dtype_class(self) -> str | None:
        """The precision most FLOPs ran in, as the peak table names it."""
        flops = self._flops_by_class()
        return max(flops, key=lambda k: flops[k]) if flops else None

    def peak_classes(self) -> str:
        """The precisions that ran, most FLOPs first ("tf32+fp32"): what the MFU is against."""
        flops = self._flops_by_class()
        return "+".join(sorted(flops, key=lambda k: -flops[k]))

    def _flops_by_class(self) -> dict[str, int]:
        flops: dict[str, int] = {}
        for row in self.ran:
            key = _peak_class(row.work)
            if key is not None:
                flops[key] = flops.get(key, 0) + row.flops
        return flops

    def utilisation(
        self, name: str, t0: int, t1: int, began_in: tuple[int, int] | None = None
    ) -> Utilisation:
        """Model FLOPs of the calls that began in `began_in` (default [t0, t1)) and ran
        kernels, their rate over the window [t0, t1), and the MFU: the time the device would
        need for those FLOPs at the peak of the precision each op ran in (TF32 for fp32 GEMMs
        on tensor cores), over the window; None where no peak is known. With one precision it
        is the rate over that peak."""
        flops, at_peak_ns, known = 0, 0.0, False
        c0, c1 = began_in or (t0, t1)
        for row in self.ran:
            n = row.work.flops * (bisect_left(row.starts, c1) - bisect_left(row.starts, c0))
            flops += n
            key = _peak_class(row.work)
            peak = self.peaks.tflops(key) if self.peaks is not None and key else None
            if peak and n:
                at_peak_ns += n / peak / 1e3  # TFLOP/s is 1e3 FLOPs per ns
                known = True
        rate = flops / (t1 - t0) / 1e3 if t1 > t0 else None
        mfu = at_peak_ns / (t1 - t0) if known and t1 > t0 else None
        return Utilisation(name, t1 - t0, flops, rate, mfu)

    def roof(self, work: Work) -> tuple[float, str] | None:
        """(ns one call would take at its roof, "compute" or "memory"): the roof is the lower
        of the dtype's peak and HBM bandwidth times the op's intensity; None without peaks for
        it. An op of unknown dtype (a Triton kernel) is judged on the memory side only where
        even the fastest listed dtype would leave it there."""
        if self.peaks is None:
            return None
        hbm = self.peaks.hbm_tbs or None
        memory = hbm * work.intensity if hbm else None
        peak = self.peaks.tflops(_peak_class(work) or "")
        if peak is None and not work.dtype:
            fastest = max((v for v in (self.peaks.bf16, self.peaks.fp16) if v), default=None)
            if memory is None or fastest is None or memory > fastest:
                return None
        # TFLOP/s and TB/s are 1e3 FLOPs and bytes per ns.
        if hbm is not None and memory is not None and (peak is None or memory < peak):
            return work.bytes / hbm / 1e3, "memory"
        if peak is None:
            return None
        return work.flops / peak / 1e3, "compute"

    def percent_of_peak(self, row: ShapeRow) -> tuple[float, str] | None:
        """(% of the roof, "compute" or "memory"): the time the calls would take at their roof
        over their kernels' time, which is achieved TFLOP/s over the dtype's peak on the
        compute side and achieved TB/s over HBM TB/s on the memory side. None without a roof,
        and where the calls ran faster than their roof allows (see `above_roof`)."""
        share = self._share(row)
        return share if share is not None and share[0] <= 100.0 else None

    def above_roof(self, row: ShapeRow) -> str | None:
        """The assumption that failed when the calls ran faster than their roof allows, which
        no kernel can: "HBM bandwidth" (the bytes did not all cross HBM) or "<precision> peak"
        (the math ran in another precision, or the model counts FLOPs that did not run).
        None when the row is within its roof or has none."""
        share = self._share(row)
        if share is None or share[0] <= 100.0:
            return None
        if share[1] == "memory":
            return "HBM bandwidth"
        return f"{_peak_class(row.work) or 'fastest'} peak"

    def _share(self, row: ShapeRow) -> tuple[float, str] | None:
        roof = self.roof(row.work)
        if roof is None or not row.gpu_ns:
            return None
        return 100.0 * roof[0] * row.ran / row.gpu_ns, roof[1]

    def above_roof_rows(self) -> list[ShapeRow]:
        """The rows that ran faster than their roof allows: no percentage is shown for them."""
        return [row for row in self.ran if self.above_roof(row) is not None]


def _peak_class(work: Work) -> str | None:
    """The peak-table precision `work` ran at (None: unknown dtype)."""
    return work.math or DTYPE_CLASS.get(work.dtype)


def roofline(trace: Trace, override: str | None = None) -> Roofline:
    """The by-shape rows of the whole trace, with the peaks of its first GPU."""
    rows, call_rows, call_group = shape_rows(trace)
    recorded = bool(rows) or shapes_recorded(trace)
    return Roofline(rows, trace_peaks(trace, override), recorded, call_rows, call_group)


def trace_peaks(trace: Trace, override: str | None = None) -> Peaks | None:
    """The peaks of the trace's first named GPU (None: unknown)."""
    names = [_device_name(d) for d in trace.devices]
    return peaks_for(next((n for n in names if n), ""), override)


def _device_name(device: dict[str, Any]) -> str:
    """The device's name, or for an unnamed AMD gfx942 (vLLM's ROCm traces leave the name
    empty) the part its CU count and memory tell: 304 CUs with 192 GiB is an MI300X, with
    256 GiB an MI325X."""
    name = str(device.get("name", ""))
    if name:
        return name
    gfx942 = (device.get("computeMajor"), device.get("computeMinor"), device.get("warpSize"))
    if gfx942 == (9, 4, 64) and device.get("numSms") == 304:
        memory = device.get("totalGlobalMem")
        if isinstance(memory, int):
            return "AMD Instinct MI325X" if memory > 220 * 2**30 else "AMD Instinct MI300X"
    return ""


CALLS_KEY = "modelled calls"  # its slot in `trace.derived` (a model cache may fill it)


def modelled_calls(trace: Trace) -> int:
    """How many calls `roofline` would read the args of."""
    return trace.derive(CALLS_KEY, lambda: len(candidates(trace)))


def candidates(trace: Trace) -> np.ndarray:
    """The ops the model knows that no other such op holds (that one counts their work), less
    those whose GPU work crossed to or from the host: a copy over PCIe is not bound by HBM,
    and the peak table has no PCIe roof, so it gets no number rather than a wrong one."""
    return trace.derive("roofline candidates", lambda: _candidates(trace))


def _candidates(trace: Trace) -> np.ndarray:
    known = np.asarray(
        [knows(n) or n.startswith(TRITON_PREFIX) for n in trace.names] + [False], dtype=bool
    )
    tree = op_tree(trace)
    modelled = tree.is_op & known[trace.slices.name] & ~host_copies(trace)
    rows = np.flatnonzero(modelled)
    inside = np.zeros(len(rows), bool)
    at = tree.up[rows]
    while True:
        live = at >= 0
        if not live.any():
            break
        inside |= live & modelled[np.maximum(at, 0)]
        at = np.where(live, tree.up[np.maximum(at, 0)], -1)
    return rows[~inside]


SHAPES_KEY = "shapes recorded"  # its slot in `trace.derived` (a model cache may fill it)


def shapes_recorded(trace: Trace) -> bool:
    """Whether ops carry Input Dims: the first CPU ops are looked at, modelled or not (a trace
    whose GEMMs all ran inside a graph replay has shapes, and no modelled op). Their args are
    decoded again from the file, so this is found once per trace."""
    return trace.derive(SHAPES_KEY, lambda: _shapes_recorded(trace))


def _shapes_recorded(trace: Trace) -> bool:
    for row in np.flatnonzero(op_tree(trace).is_op)[:200].tolist():
        args = trace.args(row)
        if isinstance(args, dict) and "Input Dims" in args:
            return True
    return False


def coverage(trace: Trace, r: Roofline) -> float | None:
    """The share of all GPU work time that the modelled ops' kernels account for."""
    total = int(trace.slices.dur[attribute(trace).work].sum())
    return sum(row.gpu_ns for row in r.rows) / total if total else None


ROWS_KEY = "roofline rows"  # its slot in `trace.derived` (a model cache may fill it)
ShapeRows = tuple[list[ShapeRow], np.ndarray, np.ndarray]


def shape_rows(trace: Trace) -> ShapeRows:
    """The by-shape rows of the whole trace, most GPU time first, and each call's slice row and
    row index (once per trace: every modelled call's args are decoded again from the file)."""
    return trace.derive(ROWS_KEY, lambda: _rows(trace))


def _rows(trace: Trace) -> ShapeRows:
    _, cuda_total = cuda_totals(trace)
    groups: dict[tuple[str, str, str, str, str], tuple[Work, list[int], list[int], list[int]]] = {}
    picked = candidates(trace)
    # In file order and a batch at a time: each chunk of the file is decoded about once, and
    # only a batch's args are held at a time.
    picked = picked[np.argsort(trace.slices.event[picked], kind="stable")]
    for row, args in _with_shapes(trace, picked):
        name = trace.slice_name(row)
        if name.startswith(TRITON_PREFIX):  # its counts are other args than the shapes
            args = trace.args(row)
        work = work_of(name, args, _iteration(trace, row))
        if work is None or not isinstance(args, dict):
            continue
        work = with_math(trace, row, work)
        key = (
            name,
            json.dumps(args.get("Input Dims")),
            json.dumps(args.get("Concrete Inputs")),
            json.dumps(args.get("Input type")),
            work.variant,
        )
        _, times, starts, calls = groups.setdefault(key, (work, [], [], []))
        times.append(int(cuda_total[row]))
        if times[-1]:
            starts.append(int(trace.slices.start[row]))
        calls.append(row)
    order = sorted(groups, key=lambda k: (-sum(groups[k][1]), k[0], k[1], k[3]))
    rows = []
    for key in order:
        work, times, starts, _ = groups[key]
        name, dims, concrete, types, _ = key
        at = (len(times), sum(times), min(times), max(times), tuple(sorted(starts)))
        idle = len(times) - len(starts)
        rows.append(
            ShapeRow(name, dims, work, *at, concrete=concrete, types=types, idle_calls=idle)
        )
    call_rows = [groups[k][3] for k in order]
    group = np.repeat(np.arange(len(order), dtype=np.int64), [len(c) for c in call_rows])
    flat = np.asarray([r for c in call_rows for r in c], np.int64)
    return rows, flat, group


def iteration_at(trace: Trace, name: str, t: int) -> Iteration | None:
    """The serving iteration of `trace` a call of op `name` at `t` ran in, where the op's work
    depends on it (paged attention); None for any other op."""
    if serving_work.base_name(name) not in serving_work.NEEDS_ITERATION:
        return None
    return iterations(trace).at(t)


def _iteration(trace: Trace, row: int) -> Iteration | None:
    return iteration_at(trace, trace.slice_name(row), int(trace.slices.start[row]))


def _with_shapes(trace: Trace, rows: np.ndarray) -> Iterator[tuple[int, Any]]:
    for a in range(0, len(rows), SHAPES_BATCH):
        batch = rows[a : a + SHAPES_BATCH]
        yield from zip(
            batch.tolist(), trace.args_reader.shapes(trace.slices.event[batch]), strict=True
        )


def one_call(trace: Trace, row: int, args: object) -> tuple[ShapeRow, Roofline] | None:
    """Slice `row` as a by-shape row of its own (its FLOPs, bytes and the GPU time of the
    kernels it caused), with the trace's peaks; None when the model does not know the op."""
    work = work_of(trace.slice_name(row), args, _iteration(trace, row))
    if work is None or host_copies(trace)[row]:  # a host copy: no HBM roof for it
        return None
    work = with_math(trace, row, work)
    gpu = int(cuda_totals(trace)[1][row])
    dims = json.dumps(args.get("Input Dims")) if isinstance(args, dict) else ""
    one = ShapeRow(trace.slice_name(row), dims, work, 1, gpu, gpu, gpu)
    return one, Roofline([one], trace_peaks(trace, None), True)
