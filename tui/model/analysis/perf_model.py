"""FLOPs and bytes moved of one op, from the shapes `record_shapes=True` writes (`Input Dims`,
`Input type`, `Concrete Inputs`). The exported JSON holds no FLOPs, even with `with_flops`, so
they are recomputed here; an op the model does not know gets None, never a made-up number.

Formulas (as TraceLens counts them, so the two can be compared):
- GEMM `mm` [M,K]x[K,N]: 2MNK; `addmm` adds MN for the bias; `bmm` [B,M,K]x[B,K,N]: 2BMNK,
  `baddbmm` adds BMN. Bytes: the operands and the output once each (the bias as written).
  `matmul` and `linear` get none: the `mm`/`addmm`/`bmm` they run below them is counted. An
  op inside another modelled op (the `_flash_attention_forward` under
  `_scaled_dot_product_flash_attention`) is not counted again (roofline.py).
- Attention forward (`_scaled_dot_product_{flash,efficient,cudnn}_attention`,
  `_flash_attention_forward`, `_efficient_attention_forward`), q [B,H,N,d], k [B,Hk,Nk,d],
  v [B,Hk,Nk,dv]: 2BHN*Nk*d + 2BHN*Nk*dv (QK^T and PV), halved when causal. Bytes: q, k, v and
  the output [B,H,N,dv].
- Binary elementwise (`add`, `sub`, `mul`, `div` and their in-place forms): one FLOP per output
  element; bytes: the inputs and the output (the broadcast shape), a Python scalar operand as
  the 8-byte 0-dim tensor torch wraps it in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

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
}
GEMM, ATTENTION, ELEMENTWISE = "GEMM", "attention", "elementwise"
_ATTENTION = {
    "aten::_scaled_dot_product_flash_attention",
    "aten::_scaled_dot_product_efficient_attention",
    "aten::_scaled_dot_product_cudnn_attention",
    "aten::_flash_attention_forward",
    "aten::_efficient_attention_forward",
}
# These two take q, k, v as [B, N, H, d] (the kernels' own layout), the others [B, H, N, d].
_SEQUENCE_FIRST = {"aten::_flash_attention_forward", "aten::_efficient_attention_forward"}
_BINARY = {f"aten::{op}{suffix}" for op in ("add", "sub", "mul", "div") for suffix in ("", "_")}
_GEMMS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}
MODELLED = _GEMMS | _ATTENTION | _BINARY


@dataclass(frozen=True)
class Work:
    """What one call of an op computes and moves."""

    kind: str  # GEMM, attention, elementwise
    flops: int
    bytes: int
    dtype: str  # as torch writes it: "c10::BFloat16"

    @property
    def intensity(self) -> float:
        """FLOPs per byte moved."""
        return self.flops / self.bytes if self.bytes else math.inf


def work_of(name: str, args: Any) -> Work | None:
    """The FLOPs and bytes of one call of `name`, from its args; None where unknown."""
    if not isinstance(args, dict):
        return None
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not isinstance(dims, list) or not isinstance(types, list) or len(dims) != len(types):
        return None
    try:
        if name in _GEMMS:
            return _gemm(name, dims, types)
        if name in _ATTENTION:
            return _attention(dims, types, args.get("Concrete Inputs"), name in _SEQUENCE_FIRST)
        if name in _BINARY:
            return _binary(dims, types)
    except (TypeError, ValueError, IndexError):
        return None  # shapes not as the op writes them
    return None


def _size(dtype: str) -> int:
    size = DTYPE_BYTES.get(dtype)
    if size is None:
        raise ValueError(dtype)
    return size


def _count(shape: list[int]) -> int:
    return math.prod(int(d) for d in shape)


def _gemm(name: str, dims: list[Any], types: list[str]) -> Work | None:
    with_bias = name in ("aten::addmm", "aten::baddbmm")
    bias, a, b = (dims[0], dims[1], dims[2]) if with_bias else (None, dims[0], dims[1])
    dtype = types[1] if with_bias else types[0]
    batched = name in ("aten::bmm", "aten::baddbmm")
    if batched:
        (batch, m, k), (batch_b, k_b, n) = a, b
        if batch != batch_b or k != k_b:
            return None
    else:
        (m, k), (k_b, n) = a, b
        batch = 1
        if k != k_b:
            return None
    out = batch * m * n
    flops = 2 * out * k + (out if with_bias else 0)
    elements = batch * (m * k + k * n) + out + (_count(bias) if bias else 0)
    return Work(GEMM, flops, elements * _size(dtype), dtype)


def _attention(
    dims: list[Any], types: list[str], concrete: Any, sequence_first: bool
) -> Work | None:
    q, k, v = dims[0], dims[1], dims[2]
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        return None
    if sequence_first:
        batch, n, heads, d = q
        n_kv = k[1]
    else:
        batch, heads, n, d = q
        n_kv = k[2]
    d_v = v[3]
    flops = 2 * batch * heads * n * n_kv * (d + d_v)
    if _causal(concrete):
        flops //= 2
    elements = _count(q) + _count(k) + _count(v) + batch * heads * n * d_v
    return Work(ATTENTION, flops, elements * _size(types[0]), types[0])


def _causal(concrete: Any) -> bool:
    """`is_causal`: the first boolean among the scalar inputs after q, k, v (dropout_p comes
    before it in every signature modelled)."""
    if not isinstance(concrete, list):
        return False
    flags = [c for c in concrete[3:] if c in ("True", "False")]
    return bool(flags) and flags[0] == "True"


def _binary(dims: list[Any], types: list[str]) -> Work | None:
    if len(dims) < 2 or not dims[0]:
        return None
    size = _size(types[0])
    if not dims[1]:  # a Python scalar: torch wraps it as an 8-byte 0-dim tensor
        return Work(ELEMENTWISE, _count(dims[0]), 2 * _count(dims[0]) * size + 8, types[0])
    out = _broadcast(dims[0], dims[1])
    elements = _count(dims[0]) + _count(dims[1]) + _count(out)
    return Work(ELEMENTWISE, _count(out), elements * size, types[0])


def _broadcast(a: list[int], b: list[int]) -> list[int]:
    width = max(len(a), len(b))
    a = [1] * (width - len(a)) + list(a)
    b = [1] * (width - len(b)) + list(b)
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and 1 not in (x, y):
            raise ValueError("shapes do not broadcast")
        out.append(max(x, y))
    return out
