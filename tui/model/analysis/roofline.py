"""How close to the hardware: the ops the performance model knows (perf_model.py), grouped by
name and input shapes (as `key_averages(group_by_input_shape=True)` groups them), with the GPU
time of the kernels each call caused, achieved TFLOP/s and TB/s, and the share of the device's
peak (device_peaks.py) on the side of the roofline the op sits on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..trace import Trace
from .attribution import cuda_totals, op_tree
from .device_peaks import Peaks, peaks_for
from .perf_model import DTYPE_CLASS, MODELLED, Work, work_of


@dataclass(frozen=True)
class ShapeRow:
    """One op name with one set of input shapes: its calls and what they computed."""

    name: str
    dims: str  # Input Dims as written
    work: Work  # one call's
    calls: int
    gpu_ns: int  # the kernels the calls caused, summed
    min_ns: int
    max_ns: int

    @property
    def flops(self) -> int:
        return self.work.flops * self.calls

    @property
    def bytes(self) -> int:
        return self.work.bytes * self.calls

    @property
    def tflops(self) -> float | None:
        """Achieved TFLOP/s: the calls' FLOPs over their kernels' time."""
        return self.flops / self.gpu_ns / 1e3 if self.gpu_ns else None

    @property
    def tbs(self) -> float | None:
        return self.bytes / self.gpu_ns / 1e3 if self.gpu_ns else None


@dataclass(frozen=True)
class Roofline:
    rows: list[ShapeRow]  # most GPU time first
    peaks: Peaks | None
    shapes_recorded: bool  # whether any op carries Input Dims (record_shapes=True)

    def percent_of_peak(self, row: ShapeRow) -> tuple[float, str] | None:
        """(% of the bound, "compute" or "memory"): the bound is the lower of the dtype's peak
        and HBM bandwidth times the op's intensity; None without peaks for it."""
        if self.peaks is None or row.tflops is None:
            return None
        peak = self.peaks.tflops(DTYPE_CLASS.get(row.work.dtype, ""))
        memory = self.peaks.hbm_tbs * row.work.intensity if self.peaks.hbm_tbs else None
        if peak is None and memory is None:
            return None
        if memory is not None and (peak is None or memory < peak):
            return 100.0 * row.tflops / memory, "memory"
        assert peak is not None
        return 100.0 * row.tflops / peak, "compute"


def roofline(trace: Trace, override: str | None = None) -> Roofline:
    """The by-shape rows of the whole trace, with the peaks of its first GPU."""
    return Roofline(_rows(trace), _peaks(trace, override), _shapes_recorded(trace))


def _peaks(trace: Trace, override: str | None) -> Peaks | None:
    names = [str(d.get("name", "")) for d in trace.devices if d.get("name")]
    return peaks_for(names[0] if names else "", override)


def _candidates(trace: Trace) -> np.ndarray:
    """The ops the model knows that no other such op holds (that one counts their work)."""
    known = np.asarray([n in MODELLED for n in trace.names] + [False], dtype=bool)
    tree = op_tree(trace)
    modelled = tree.is_op & known[trace.slices.name]
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


def _shapes_recorded(trace: Trace) -> bool:
    for row in _candidates(trace)[:50].tolist():
        args = trace.args(row)
        if isinstance(args, dict) and "Input Dims" in args:
            return True
    return False


def _rows(trace: Trace) -> list[ShapeRow]:
    _, cuda_total = cuda_totals(trace)
    groups: dict[tuple[str, str, str], tuple[Work, list[int]]] = {}
    for row in _candidates(trace).tolist():
        name = trace.slice_name(row)
        args = trace.args(row)
        work = work_of(name, args)
        if work is None:
            continue
        key = (name, json.dumps(args.get("Input Dims")), json.dumps(args.get("Concrete Inputs")))
        groups.setdefault(key, (work, []))[1].append(int(cuda_total[row]))
    rows = [
        ShapeRow(name, dims, work, len(times), sum(times), min(times), max(times))
        for (name, dims, _), (work, times) in groups.items()
    ]
    rows.sort(key=lambda r: (-r.gpu_ns, r.name, r.dims))
    return rows
