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
- Attention backward (the `*_backward` of those): 2.5 times the forward's FLOPs (FlashAttention-2's
  count); bytes: grad_out, q, k, v and out read, dq, dk, dv written. `_scaled_mm` (fp8) and
  `_int_mm` (int8, an int32 output): 2MNK.
- Convolution (`convolution`, `convolution_backward`): 2 x output elements x C_in/groups x kernel
  size, from stride, padding, dilation and groups in `Concrete Inputs`; backward once per
  gradient asked for; bytes input, weight and output (no bias, as TraceLens).
- Triton kernels (`triton_*` launcher events): the `kernel_flop` and `kernel_num_gb` Inductor
  wrote, when it did; their dtype is not written, so only the HBM roof applies.
- Library GEMMs in `linear`'s layout (vLLM's `rocm_unquantized_gemm`, AITER's `gemm_a16w16`):
  x [M,K], weight [N,K], bias [N]: 2MNK (+MN with a bias); bytes: all of them and the output.
- Binary elementwise (`add`, `sub`, `mul`, `div` and their in-place forms): one FLOP per output
  element; bytes: the inputs and the output (the broadcast shape), a 0-dim other operand at
  its own type (`double`: 8 bytes; a bare `Scalar`: 4), `alpha` not at all, as TraceLens.
- Unary elementwise ops, RMSNorm and reductions: memory_ops.py.
- Varlen and paged attention, fused MoE, Transformer Engine's GEMM: serving_work.py.
"""

from __future__ import annotations

from typing import Any

from . import memory_ops, serving_work
from .iterations import Iteration
from .work import ATTENTION, CONV, DTYPE_BYTES, ELEMENTWISE, GEMM, Work, count, size

TRITON = "Triton"
# Inductor's kernels: their launcher events carry `kernel_flop` / `kernel_num_gb` when
# Inductor was asked to count (`config.benchmark_kernel` / `profile_bandwidth`).
TRITON_PREFIX = "triton_"
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
_ATTENTION_BACKWARD = {
    "aten::_scaled_dot_product_flash_attention_backward",
    "aten::_scaled_dot_product_efficient_attention_backward",
    "aten::_scaled_dot_product_cudnn_attention_backward",
    "aten::_flash_attention_backward",
    "aten::_efficient_attention_backward",
}
_CONV = {"aten::convolution", "aten::convolution_backward"}
# Library GEMMs taking (x [.., K], weight [N, K], bias [N] or nothing), as `linear` does.
_LINEAR = {"vllm::rocm_unquantized_gemm", "aiter::gemm_a16w16"}
_LOW_PRECISION_GEMMS = {"aten::_scaled_mm", "aten::_int_mm"}
MODELLED = (
    _GEMMS | _ATTENTION | _ATTENTION_BACKWARD | _BINARY | _CONV | _LINEAR | _LOW_PRECISION_GEMMS
) | memory_ops.MODELLED
# Backward attention: QK^T again, dP = dO V^T, dS K, dS^T Q and P^T dO: 2.5 times the
# forward's matmul work (the FlashAttention-2 paper's count).
BACKWARD_ATTENTION_FACTOR = 2.5


def knows(name: str) -> bool:
    """Whether the model has a count for op `name` (given its args)."""
    return name in MODELLED or serving_work.base_name(name) in serving_work.MODELLED


def work_of(name: str, args: Any, iteration: Iteration | None = None) -> Work | None:
    """The FLOPs and bytes of one call of `name`, from its args (and, for a serving engine's
    paged attention, the `iteration` it ran in); None where unknown."""
    if not isinstance(args, dict):
        return None
    if name.startswith(TRITON_PREFIX):
        return _triton(args)
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not isinstance(dims, list) or not isinstance(types, list) or len(dims) != len(types):
        return None
    try:
        concrete = args.get("Concrete Inputs")
        if name in _GEMMS:
            return _gemm(name, dims, types)
        if name == "aten::_scaled_mm":
            return _scaled_mm(dims, types)
        if name == "aten::_int_mm":
            return _int_mm(dims, types)
        if name in _ATTENTION:
            return _attention(dims, types, _causal(name, concrete), name in _SEQUENCE_FIRST)
        if name in _ATTENTION_BACKWARD:
            return _attention_backward(name, dims, types, concrete)
        if name in _CONV:
            return _convolution(name, dims, types, concrete)
        if name in _BINARY:
            return _binary(dims, types)
        if name in _LINEAR:
            return _linear(dims, types)
        if name in memory_ops.MODELLED:
            return memory_ops.work_of(name, dims, types, concrete)
        return serving_work.work_of(name, dims, types, concrete, iteration)
    except (TypeError, ValueError, LookupError, ArithmeticError):
        return None  # shapes not as the op writes them
    return None


def _triton(args: dict[str, Any]) -> Work | None:
    """What Inductor wrote: `kernel_flop` (FLOPs) and `kernel_num_gb` (GB moved). The dtype is
    not written, so no compute peak applies (the HBM roof does)."""
    flops, gb = args.get("kernel_flop"), args.get("kernel_num_gb")
    numbers = [v for v in (flops, gb) if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) < (flops is not None) + (gb is not None) or not numbers:
        return None
    moved = int(float(gb) * 1e9) if gb is not None else 0
    return Work(TRITON, int(flops) if flops is not None else 0, moved, "")


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
    elements = batch * (m * k + k * n) + out + (count(bias) if bias else 0)
    return Work(GEMM, flops, elements * size(dtype), dtype)


def _linear(dims: list[Any], types: list[str]) -> Work | None:
    """x [.., K] times weight [N, K] transposed, plus a bias [N] where one is passed: 2MNK
    (+MN); bytes: x, the weight, the bias and the output [M, N]."""
    x, w = dims[0], dims[1]
    bias = dims[2] if len(dims) > 2 and isinstance(dims[2], list) and dims[2] else None
    if len(w) != 2 or not x or x[-1] != w[1] or (bias is not None and bias != [w[0]]):
        return None
    m, n, k = count(x[:-1]), w[0], w[1]
    elements = m * k + n * k + m * n + (n if bias else 0)
    return Work(GEMM, 2 * m * n * k + (m * n if bias else 0), elements * size(types[0]), types[0])


def _attention(
    dims: list[Any], types: list[str], causal: bool, sequence_first: bool
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
    if causal:
        flops //= 2
    elements = count(q) + count(k) + count(v) + batch * heads * n * d_v
    return Work(ATTENTION, flops, elements * size(types[0]), types[0])


def _scaled_mm(dims: list[Any], types: list[str]) -> Work | None:
    """An fp8 GEMM: A [M,K], B [K,N] at their own dtype; the output taken as 2-byte (bf16 or
    fp16, what `out_dtype` nearly always is: the trace does not say)."""
    (m, k), (k_b, n) = dims[0], dims[1]
    if k != k_b:
        return None
    elements = m * k * size(types[0]) + k * n * size(types[1]) + m * n * 2
    return Work(GEMM, 2 * m * n * k, elements, types[0])


def _int_mm(dims: list[Any], types: list[str]) -> Work | None:
    """An int8 GEMM: A [M,K], B [K,N] int8, the output int32 (as `torch._int_mm` writes it)."""
    (m, k), (k_b, n) = dims[0], dims[1]
    if k != k_b:
        return None
    elements = m * k * size(types[0]) + k * n * size(types[1])
    return Work(GEMM, 2 * m * n * k, elements + m * n * 4, types[0])


def _attention_backward(name: str, dims: list[Any], types: list[str], concrete: Any) -> Work | None:
    """(grad_out, q, k, v, out, ...): the forward's FLOPs times BACKWARD_ATTENTION_FACTOR;
    bytes: grad_out, q, k, v and out read, dq, dk and dv written."""
    grad, q, k, v = dims[0], dims[1], dims[2], dims[3]
    forward = _attention(
        [q, k, v], types[1:4], _causal(name, concrete),
        name in ("aten::_flash_attention_backward", "aten::_efficient_attention_backward"),
    )  # fmt: skip
    if forward is None or len(grad) != 4:
        return None
    elements = 2 * (count(q) + count(k) + count(v)) + 2 * count(grad)
    flops = int(forward.flops * BACKWARD_ATTENTION_FACTOR)
    return Work(ATTENTION, flops, elements * size(types[1]), types[1])


def _convolution(name: str, dims: list[Any], types: list[str], concrete: Any) -> Work | None:
    """`convolution(input, weight, bias, stride, padding, dilation, transposed, ...,
    groups)`: 2 * output elements * (C_in / groups) * kernel size; bytes: input, weight and
    output (the bias is not counted, as TraceLens does not). `convolution_backward`
    (grad_out, input, weight, bias_sizes, stride, ..., groups, output_mask): the forward's
    FLOPs and bytes once per gradient asked for (input, weight). Transposed ones get none."""
    backward = name == "aten::convolution_backward"
    x, w = (dims[1], dims[2]) if backward else (dims[0], dims[1])
    if not isinstance(concrete, list):
        return None
    at = 4 if backward else 3  # where stride sits among the concrete inputs
    stride, padding, dilation = (_ints(concrete[at + i]) for i in range(3))
    if concrete[at + 3] == "True":
        return None
    groups = int(concrete[at + 5])
    spatial = len(x) - 2
    if len(w) != len(x) or not (len(stride) == len(padding) == len(dilation) == spatial):
        return None
    out = [x[0], w[0]] + [
        (x[2 + i] + 2 * padding[i] - dilation[i] * (w[2 + i] - 1) - 1) // stride[i] + 1
        for i in range(spatial)
    ]
    flops = 2 * count(out) * (x[1] // groups) * count(w[2:])
    moved = (count(x) + count(w) + count(out)) * size(types[1 if backward else 0])
    if backward:
        mask = _bools(concrete[at + 6]) if len(concrete) > at + 6 else [True, True]
        times = sum(mask[:2]) or 0
        flops, moved = flops * times, moved * times
    return Work(CONV, flops, moved, types[1 if backward else 0])


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.strip("[]() ").split(",") if v.strip()]


def _bools(text: str) -> list[bool]:
    return [v.strip() == "True" for v in text.strip("[]() ").split(",") if v.strip()]


# Where each attention op's causal flag sits among its inputs (native_functions.yaml), and
# whether it is a bool (`is_causal`) or xformers' `custom_mask_type` (0: none, else causal).
_CAUSAL_AT = {
    "aten::_scaled_dot_product_flash_attention": (4, "bool"),
    "aten::_scaled_dot_product_efficient_attention": (6, "bool"),
    "aten::_scaled_dot_product_cudnn_attention": (6, "bool"),
    "aten::_flash_attention_forward": (8, "bool"),
    "aten::_efficient_attention_forward": (9, "mask"),
    "aten::_scaled_dot_product_flash_attention_backward": (11, "bool"),
    "aten::_scaled_dot_product_efficient_attention_backward": (11, "bool"),
    "aten::_scaled_dot_product_cudnn_attention_backward": (14, "bool"),
    "aten::_flash_attention_backward": (11, "bool"),
    "aten::_efficient_attention_backward": (14, "mask"),
}


def _causal(name: str, concrete: Any) -> bool:
    """Whether the call was causal, read where that op's signature puts the flag."""
    at, kind = _CAUSAL_AT.get(name, (-1, ""))
    if not isinstance(concrete, list) or not 0 <= at < len(concrete):
        return False
    value = str(concrete[at]).strip()
    return value == "True" if kind == "bool" else value not in ("", "0")


def _binary(dims: list[Any], types: list[str]) -> Work | None:
    if len(dims) < 2 or not (dims[0] or dims[1]):
        return None
    if not dims[0]:  # a 0-dim first operand (`2.0 * x` traced as mul(scalar tensor, x))
        scalar = DTYPE_BYTES.get(types[0], 4)
        return Work(
            ELEMENTWISE, count(dims[1]), 2 * count(dims[1]) * size(types[1]) + scalar, types[1]
        )
    each = size(types[0])
    if not dims[1]:  # a 0-dim other operand: read at its own type (a bare Scalar: 4 bytes)
        other = DTYPE_BYTES.get(types[1], 4)
        return Work(ELEMENTWISE, count(dims[0]), 2 * count(dims[0]) * each + other, types[0])
    out = _broadcast(dims[0], dims[1])
    elements = count(dims[0]) + count(dims[1]) + count(out)
    return Work(ELEMENTWISE, count(out), elements * each, types[0])


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
