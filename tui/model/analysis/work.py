"""What the performance model says of one call (`Work`), and the dtype tables it reads."""

from __future__ import annotations

import math

import msgspec

# Bytes per element of the dtypes torch writes in `Input type`.
DTYPE_BYTES = {
    "float": 4,
    "double": 8,
    "c10::Half": 2,
    "c10::BFloat16": 2,
    "c10::Float8_e4m3fn": 1,
    "c10::Float8_e5m2": 1,
    "c10::Float8_e4m3fnuz": 1,
    "c10::Float8_e5m2fnuz": 1,
    "int": 4,
    "long int": 8,
    "bool": 1,
    "unsigned char": 1,
    "signed char": 1,
    "short int": 2,
}
# The peak-table column a dtype computes at.
DTYPE_CLASS = {
    "float": "fp32",
    "c10::Half": "fp16",
    "c10::BFloat16": "bf16",
    "c10::Float8_e4m3fn": "fp8",
    "c10::Float8_e5m2": "fp8",
    "c10::Float8_e4m3fnuz": "fp8",
    "c10::Float8_e5m2fnuz": "fp8",
    "signed char": "int8",
}
GEMM, ATTENTION, ELEMENTWISE, CONV = "GEMM", "attention", "elementwise", "convolution"
NORM, REDUCTION = "normalisation", "reduction"


class Work(msgspec.Struct, frozen=True):
    """What one call of an op computes and moves."""

    kind: str  # GEMM, attention, elementwise, ...
    flops: int
    bytes: int
    dtype: str  # as torch writes it: "c10::BFloat16"
    # The peak class its kernels ran at when not the dtype's: "tf32" for fp32 GEMMs and
    # convolutions whose kernels ran on tensor cores (roofline.py finds it from their names).
    math: str = ""
    # What besides the shapes set the numbers (a serving iteration's KV lengths): part of the
    # by-shape row's key, and said beside its shapes.
    context: str = ""

    @property
    def variant(self) -> str:
        """What sets two calls of the same shapes apart in the by-shape rows."""
        return f"{self.math}|{self.context}"

    @property
    def intensity(self) -> float:
        """FLOPs per byte moved."""
        return self.flops / self.bytes if self.bytes else math.inf


def size(dtype: str) -> int:
    """Bytes per element; ValueError for a dtype the table does not know."""
    found = DTYPE_BYTES.get(dtype)
    if found is None:
        raise ValueError(dtype)
    return found


def count(shape: list[int]) -> int:
    return math.prod(int(d) for d in shape)
