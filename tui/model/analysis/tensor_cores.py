"""Which GEMM and convolution kernels ran on tensor cores, known from their names as the
TensorBoard plugin knew it, and what fp32 work on CUDA cores could gain from them."""

from __future__ import annotations

import msgspec
import numpy as np

from ..patterns import FP32_CUDA_CORE_KERNEL, MATMUL_KERNEL, TENSOR_CORE_KERNEL
from ..trace import Trace
from .attribution import attribute
from .device_peaks import Peaks, all_peaks


def uses_tensor_cores(name: str) -> bool | None:
    """Whether a GEMM or convolution kernel ran on tensor cores; None for other work."""
    if TENSOR_CORE_KERNEL.search(name):
        return True
    if MATMUL_KERNEL.search(name) or FP32_CUDA_CORE_KERNEL.search(name):
        return False
    return None


class CudaCoreWork(msgspec.Struct, frozen=True):
    """fp32 GEMM and convolution kernels that ran on CUDA cores in a window."""

    gpu_ns: int
    kernels: int
    longest: int  # slice row of the longest one (-1: none)
    names: tuple[str, ...]  # most time first


def fp32_on_cuda_cores(trace: Trace, t0: int, t1: int) -> CudaCoreWork:
    """The fp32 GEMM and convolution kernels on CUDA cores that started in [t0, t1)."""
    s = trace.slices
    work = attribute(trace).work
    work = work[(s.start[work] >= t0) & (s.start[work] < t1)]
    fp32 = trace.name_test(
        lambda n: FP32_CUDA_CORE_KERNEL.search(n) and not TENSOR_CORE_KERNEL.search(n),
        s.name[work],
    )
    rows = work[fp32[s.name[work]]]
    if not len(rows):
        return CudaCoreWork(0, 0, -1, ())
    names, dur = s.name[rows], s.dur[rows]
    ids, at = np.unique(names, return_inverse=True)
    by_name = np.bincount(at, weights=dur)
    order = np.argsort(-by_name, kind="stable")
    top = tuple(trace.names[int(ids[i])] for i in order)
    return CudaCoreWork(int(dur.sum()), len(rows), int(rows[np.argmax(dur)]), top)


def tensor_core_gain(peaks: Peaks | None) -> tuple[str, float]:
    """The tensor-core mode an fp32 GEMM could run in on this device ("tf32", or "fp16" where
    the device has no TF32, as a V100) and its peak over the fp32 peak. An unknown device gets
    the smallest such ratio among the devices we know the peaks of (a bound that holds on all)."""
    if peaks is not None and peaks.fp32:
        for mode in ("tf32", "bf16", "fp16"):
            peak = peaks.tflops(mode)
            if peak:
                return mode, peak / peaks.fp32
    ratios = [(p.tf32 or p.bf16 or p.fp16 or 0.0) / p.fp32 for p in all_peaks() if p.fp32]
    return "tf32", min(r for r in ratios if r > 1)


MATMUL_KEY = "has matmul kernels"  # its slot in `trace.derived` (a model cache may fill it)


def has_matmul_kernels(trace: Trace) -> bool:
    """Whether any GPU work is a GEMM or convolution kernel (computed once)."""

    def find() -> bool:
        names = trace.slices.name[attribute(trace).work]
        return bool(trace.name_test(lambda n: uses_tensor_cores(n) is not None, names)[names].any())

    return trace.derive(MATMUL_KEY, find)
