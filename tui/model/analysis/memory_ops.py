"""The performance model's ops that move more than they compute: unary elementwise ops,
RMSNorm, and reductions. Their bytes matter (they sit on the memory side of any roofline);
their FLOPs are counted as TraceLens counts them, so the two compare.

- Unary elementwise (`copy_`, `clamp_min`, `sigmoid`, `silu`, `pow` with a scalar exponent,
  `relu`, `gelu`...): one FLOP per element; bytes: the input and the output once each, each at
  its own dtype (`copy_(self, src)` converts from src's type to self's).
- RMSNorm (AITER's `rms_norm`, `rmsnorm`, `add_rmsnorm`, `rmsnorm2d_fwd_with_add_ck`, torch's
  `_fused_rms_norm`), rows M of N channels: 4MN + 2M FLOPs (square, sum, mean and rsqrt per row,
  normalise, scale), MN more for the fused residual add; bytes: every [.., N] tensor it reads
  or writes (the output too, when it returns it) and the [N] weight.
- Layer and batch norm forward (`layer_norm`, `native_layer_norm`, `batch_norm`,
  `native_batch_norm`, cuDNN's and MIOpen's), E input elements over N channels (the
  normalised shape, or dim 1): 5E + 6N FLOPs, (2E + 6N) elements moved, as TraceLens counts;
  batch norm backward: 9E FLOPs, 3E + 4N elements (grad_out and input read, grad_input written,
  and the per-channel statistics and gradients); layer norm backward (`native_layer_norm_backward`,
  N the normalised shape) is counted as batch norm backward is (TraceLens has no sheet for it).
- Serving engines' fused ops, as TraceLens counts them: `silu_and_mul(out, input)` (vLLM's
  `_C::`, SGLang's `sgl_kernel::`), 5 FLOPs per output element, bytes the input and the
  output; `rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox)`, 3 FLOPs
  per element of query and key, bytes those read and written (the cache and positions aside).
- Softmax (`_softmax`, `softmax`, `_log_softmax`), E elements: 5E FLOPs (the row's max, the
  subtraction, exp, the row's sum, the division: the usual count), bytes the input and the
  output.
- Reductions (`sum`, `mean`, `amax`, `amin`) over `dim` (all dims when empty or absent): one
  FLOP per input element; bytes: the input and the output. TraceLens writes the output as one
  element whatever `dim` is; here it has the shape `dim` leaves, so a reduction over one axis
  of several moves more bytes here than in TraceLens's sheet (the FLOPs agree).
"""

from __future__ import annotations

from typing import Any

from .work import ELEMENTWISE, NORM, REDUCTION, Work, count, size

UNARY = {
    f"aten::{op}{suffix}"
    for op in (
        "copy", "clamp_min", "clamp_max", "sigmoid", "rsqrt", "silu", "neg", "pow", "relu",
        "gelu", "tanh", "exp", "sqrt", "abs", "hardtanh",
    )
    for suffix in ("", "_")
}  # fmt: skip
# RMSNorm ops: whether they return the output (it is not among their inputs).
RMS_NORM = {
    "aiter::rms_norm": True,
    "aiter::rmsnorm": False,
    "aiter::add_rmsnorm": False,
    "aiter::rmsnorm2d_fwd_with_add_ck": False,
    "aten::_fused_rms_norm": True,
}
REDUCE = {"aten::sum", "aten::mean", "aten::amax", "aten::amin"}
LAYER_NORM = {"aten::layer_norm", "aten::native_layer_norm"}
BATCH_NORM = {f"aten::{lib}batch_norm" for lib in ("", "native_", "cudnn_", "miopen_")}
BATCH_NORM_BACKWARD = {
    f"aten::{lib}batch_norm_backward" for lib in ("native_", "cudnn_", "miopen_")
}
LAYER_NORM_BACKWARD = {"aten::native_layer_norm_backward"}
SOFTMAX = {"aten::_softmax", "aten::softmax", "aten::_log_softmax", "aten::log_softmax"}
MODELLED = UNARY | set(RMS_NORM) | REDUCE | LAYER_NORM | BATCH_NORM | BATCH_NORM_BACKWARD
SILU_AND_MUL = {f"{ns}::silu_and_mul" for ns in ("_C", "vllm", "sgl_kernel")}
ROTARY = {f"{ns}::rotary_embedding" for ns in ("_C", "vllm", "sgl_kernel")}
MODELLED |= LAYER_NORM_BACKWARD | SOFTMAX | SILU_AND_MUL | ROTARY


def work_of(name: str, dims: list[Any], types: list[str], concrete: Any) -> Work | None:
    if name in UNARY:
        return _unary(name, dims, types)
    if name in RMS_NORM:
        return _rms_norm(name, dims, types)
    if name in REDUCE:
        return _reduce(dims, types, concrete)
    if name in LAYER_NORM or name in BATCH_NORM:
        return _norm(name, dims, types, concrete)
    if name in BATCH_NORM_BACKWARD:
        return _norm_backward(count(dims[0]), dims[0][1], types[0])
    if name in LAYER_NORM_BACKWARD:
        # The normalised shape, or where older torch wrote no Concrete Inputs, the weight's.
        given = _axes(concrete[2] if isinstance(concrete, list) and len(concrete) > 2 else "")
        if not given and len(dims) > 5 and isinstance(dims[5], list):
            given = dims[5]
        if not given or given != dims[0][-len(given) :]:
            return None
        return _norm_backward(count(dims[0]), count(given), types[0])
    if name in SILU_AND_MUL:
        out, given = dims[0], dims[1]
        if not out or not given or out[:-1] != given[:-1] or 2 * out[-1] != given[-1]:
            return None
        return Work(
            ELEMENTWISE, 5 * count(out), (count(out) + count(given)) * size(types[0]), types[0]
        )
    if name in ROTARY:
        if len(dims) < 3 or not dims[1] or not isinstance(dims[2], list):
            return None
        elements = count(dims[1]) + count(dims[2])
        return Work(ELEMENTWISE, 3 * elements, 2 * elements * size(types[1]), types[1])
    if name in SOFTMAX:
        if not dims or not isinstance(dims[0], list) or not dims[0]:
            return None
        elements = count(dims[0])
        return Work(NORM, 5 * elements, 2 * elements * size(types[0]), types[0])
    return None


def _norm_backward(elements: int, channels: int, dtype: str) -> Work:
    return Work(NORM, 9 * elements, (3 * elements + 4 * channels) * size(dtype), dtype)


def _norm(name: str, dims: list[Any], types: list[str], concrete: Any) -> Work | None:
    """Layer norm normalises over the shape it is given (Concrete Inputs[1], "[768]"), batch
    norm over dim 1's channels."""
    shape = dims[0]
    if not isinstance(shape, list) or len(shape) < 2:
        return None
    if name in LAYER_NORM:
        given = _axes(concrete[1] if isinstance(concrete, list) and len(concrete) > 1 else "")
        if not given or given != shape[-len(given) :]:
            return None
        channels = count(given)
    else:
        channels = shape[1]
    elements = count(shape)
    moved = (2 * elements + 6 * channels) * size(types[0])
    return Work(NORM, 5 * elements + 6 * channels, moved, types[0])


def _unary(name: str, dims: list[Any], types: list[str]) -> Work | None:
    if not dims or not isinstance(dims[0], list):
        return None
    elements = count(dims[0])
    copies = name in ("aten::copy", "aten::copy_")
    if copies and (len(dims) < 2 or count(dims[1]) != elements):
        return None
    if not copies and any(d for d in dims[1:]):  # another tensor operand: not unary
        return None
    out = size(types[1]) if copies else size(types[0])
    return Work(ELEMENTWISE, elements, elements * (size(types[0]) + out), types[0])


def _rms_norm(name: str, dims: list[Any], types: list[str]) -> Work | None:
    tensors = [(d, t) for d, t in zip(dims, types, strict=True) if isinstance(d, list) and d]
    rows = [(d, t) for d, t in tensors if len(d) > 1]
    weight = [d for d, _ in tensors if len(d) == 1]
    if not rows or len(weight) != 1:
        return None
    shape, dtype = rows[0]
    channels = shape[-1]
    if weight[0] != [channels] or any(d != shape for d, _ in rows):
        return None
    m = count(shape[:-1])
    full = len(rows) + RMS_NORM[name]
    fused_add = full >= 4  # input and residual in, output and residual out
    flops = 4 * m * channels + 2 * m + (m * channels if fused_add else 0)
    moved = (full * m * channels + channels) * size(dtype)
    return Work(NORM, flops, moved, dtype)


def _reduce(dims: list[Any], types: list[str], concrete: Any) -> Work | None:
    shape = dims[0]
    if not isinstance(shape, list):
        return None
    axes = _axes(concrete[1] if isinstance(concrete, list) and len(concrete) > 1 else "")
    if axes is None:
        return None
    rank = len(shape)
    gone = {a % rank for a in axes} if rank else set()
    kept = [n for i, n in enumerate(shape) if axes and i not in gone]
    elements = count(shape)
    moved = (elements + count(kept)) * size(types[0])
    return Work(REDUCTION, elements, moved, types[0])


def _axes(text: str) -> list[int] | None:
    """`dim` as Concrete Inputs writes it ("[-1, -2]", "1", "" or "[]" for all); None where
    it is something else (a dtype, say)."""
    text = str(text).strip("[]() ")
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        return None
