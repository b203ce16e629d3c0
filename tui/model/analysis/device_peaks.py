"""What a device can do: dense peak TFLOP/s per dtype and HBM TB/s, by the name the trace's
`deviceProperties` give, matched by prefix (the longest first). Dense means without 2:4
structured sparsity (datasheets often print the sparse figure, twice these). A user's own
numbers (`TRACE_TUI_PEAKS="bf16=900,hbm=3.0"`, or the `--peaks` flag) replace the table's.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
from msgspec.structs import replace

DTYPES = ("bf16", "fp16", "tf32", "fp32", "fp8", "int8")


class Peaks(msgspec.Struct, frozen=True):
    """Dense TFLOP/s by dtype class (TOPS for int8; None: the device has no such unit) and HBM
    TB/s."""

    device: str
    bf16: float | None
    fp16: float | None
    tf32: float | None
    fp32: float | None
    fp8: float | None
    hbm_tbs: float
    int8: float | None = None

    def tflops(self, dtype_class: str) -> float | None:
        return getattr(self, dtype_class, None) if dtype_class in DTYPES else None


# (name prefix, peaks). Longest prefix first wins, so "NVIDIA H100 PCIe" beats "NVIDIA H100".
_TABLE: list[tuple[str, Peaks]] = [
    # NVIDIA H100 Tensor Core GPU datasheet (2023), SXM5: BF16/FP16 989.4, TF32 494.7, FP32 66.9,
    # FP8 1,978.9 dense TFLOP/s, INT8 1,978.9 TOPS; HBM3 3.35 TB/s. The 80GB HBM3 part is SXM5.
    ("NVIDIA H100", Peaks("H100 SXM", 989.4, 989.4, 494.7, 66.9, 1978.9, 3.35, int8=1978.9)),
    # Same datasheet, PCIe: BF16/FP16 756, TF32 378, FP32 51.2, FP8 and INT8 1,513; HBM2e 2 TB/s.
    ("NVIDIA H100 PCIe", Peaks("H100 PCIe", 756.0, 756.0, 378.0, 51.2, 1513.0, 2.0, int8=1513.0)),
    # Same datasheet, H100 NVL (per GPU): BF16/FP16 835, TF32 418, FP32 60, FP8 and INT8 1,671;
    # HBM3 3.9 TB/s.
    ("NVIDIA H100 NVL", Peaks("H100 NVL", 835.0, 835.0, 418.0, 60.0, 1671.0, 3.9, int8=1671.0)),
    # NVIDIA H200 Tensor Core GPU datasheet (2024), SXM: compute as H100 SXM; HBM3e 4.8 TB/s.
    ("NVIDIA H200", Peaks("H200 SXM", 989.4, 989.4, 494.7, 66.9, 1978.9, 4.8, int8=1978.9)),
    # NVIDIA HGX B200 specifications (2024), per GPU (the 8-GPU figures / 8): BF16/FP16 2,250,
    # TF32 1,100, FP32 75, FP8 4,500 dense TFLOP/s, INT8 4,500 TOPS; HBM3e 8 TB/s.
    ("NVIDIA B200", Peaks("B200", 2250.0, 2250.0, 1100.0, 75.0, 4500.0, 8.0, int8=4500.0)),
    # NVIDIA A100 Tensor Core GPU datasheet (2021): BF16/FP16 312, TF32 156, FP32 19.5 TFLOP/s,
    # INT8 624 TOPS;
    # HBM2e 2.039 TB/s (80GB SXM), HBM2 1.555 TB/s (40GB).
    (
        "NVIDIA A100-SXM4-80GB",
        Peaks("A100 80GB", 312.0, 312.0, 156.0, 19.5, None, 2.039, int8=624.0),
    ),
    ("NVIDIA A100 80GB", Peaks("A100 80GB", 312.0, 312.0, 156.0, 19.5, None, 1.935, int8=624.0)),
    ("NVIDIA A100", Peaks("A100 40GB", 312.0, 312.0, 156.0, 19.5, None, 1.555, int8=624.0)),
    # NVIDIA L4 Tensor Core GPU datasheet (2023): BF16/FP16 121, TF32 60, FP32 30.3, FP8 242.5
    # dense TFLOP/s, INT8 242.5 TOPS; GDDR6 0.3 TB/s.
    ("NVIDIA L4", Peaks("L4", 121.0, 121.0, 60.0, 30.3, 242.5, 0.3, int8=242.5)),
    # NVIDIA Tesla V100 datasheet (2020), SXM2: FP16 tensor 125, FP32 15.7 TFLOP/s (no INT8
    # tensor cores); HBM2 0.9 TB/s.
    ("Tesla V100", Peaks("V100 SXM2", None, 125.0, None, 15.7, None, 0.9)),
    # AMD Instinct MI300X data sheet (2023): BF16/FP16 1,307.4, TF32 653.7, FP32 163.4 (matrix),
    # FP8 2,614.9 dense TFLOP/s, INT8 2,614.9 TOPS; HBM3 5.3 TB/s.
    (
        "AMD Instinct MI300X",
        Peaks("MI300X", 1307.4, 1307.4, 653.7, 163.4, 2614.9, 5.3, int8=2614.9),
    ),
    # AMD Instinct MI325X data sheet (2024): compute as MI300X; HBM3E 6 TB/s.
    (
        "AMD Instinct MI325X",
        Peaks("MI325X", 1307.4, 1307.4, 653.7, 163.4, 2614.9, 6.0, int8=2614.9),
    ),
    # AMD Instinct MI250X data sheet (2021): BF16/FP16 383, FP32 95.7 (matrix) TFLOP/s, INT8 383
    # TOPS; HBM2e 3.2 TB/s. MI250: BF16/FP16 and INT8 362.1, FP32 90.5; 3.2 TB/s.
    ("AMD Instinct MI250X", Peaks("MI250X", 383.0, 383.0, None, 95.7, None, 3.2, int8=383.0)),
    ("AMD Instinct MI250", Peaks("MI250", 362.1, 362.1, None, 90.5, None, 3.2, int8=362.1)),
    # AMD Instinct MI210 data sheet (2022): BF16/FP16 and INT8 181, FP32 45.3 (matrix); HBM2e
    # 1.6 TB/s.
    ("AMD Instinct MI210", Peaks("MI210", 181.0, 181.0, None, 45.3, None, 1.6, int8=181.0)),
]


def all_peaks() -> list[Peaks]:
    """Every device the table knows."""
    return [peaks for _, peaks in _TABLE]


def peaks_for(name: str, override: str | None = None) -> Peaks | None:
    """The peaks of the device named `name` (None when unknown), with a user's `override`
    ("bf16=900,hbm=3.0"; default TRACE_TUI_PEAKS) applied; an override alone names a device.

    Raises:
        ValueError: the override is not `key=number` pairs of bf16 fp16 tf32 fp32 fp8 int8 hbm.
    """
    found = None
    for prefix, peaks in sorted(_TABLE, key=lambda p: -len(p[0])):
        if name.startswith(prefix):
            found = peaks
            break
    override = override if override is not None else os.environ.get("TRACE_TUI_PEAKS", "")
    if not override:
        return found
    values = _parse(override)
    base = found or Peaks(name or "user peaks", None, None, None, None, None, 0.0)
    return replace(base, **values)


def _parse(text: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for part in text.split(","):
        key, _, number = part.strip().partition("=")
        key = "hbm_tbs" if key == "hbm" else key
        if key not in (*DTYPES, "hbm_tbs"):
            raise ValueError(f"unknown key {key!r} (bf16 fp16 tf32 fp32 fp8 int8 hbm)")
        try:
            values[key] = float(number)
        except ValueError:
            raise ValueError(f"{part.strip()!r} is not key=number") from None
        if not values[key] > 0:
            raise ValueError(f"{part.strip()!r}: a peak is more than 0")
    return values
