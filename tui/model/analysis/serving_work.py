"""FLOPs and bytes of the ops serving engines and training libraries run in place of torch's:
variable-length and paged attention, fused MoE, Transformer Engine's GEMM. As TraceLens counts
them (its `flash_attention_varlen_*`, `InferenceAttention`, fused-MoE and `te_gemm_ts` models),
so the two can be compared; where we differ, the README says so.

- Varlen flash attention (`flash_attn::_flash_attn_varlen_forward`/`_backward`): q [Tq, H, d],
  k [Tk, Hk, d], v [Tk, Hk, dv] packed, `cu_seqlens` of n + 1 offsets. The sequences' lengths
  are not in the trace (only the offsets' count and the longest), so the count is the least
  the totals allow: one sequence of the longest lengths, the other n - 1 equal. Per sequence
  2·H·Lq·Lk·(d + dv), halved when causal; backward 2.5 times that (perf_model.py's rule).
- Paged attention (vLLM's `unified_attention_with_output`, AITER's `mha_varlen_fwd`,
  `mha_batch_prefill`, `fmha_v3_varlen_fwd`, SGLang's `attention_paged_attention_ragged`):
  the KV lengths come from the iteration the call ran in (iterations.py). FLOPs
  H·(d + dv)·(2·c_sqsk - c_sqsq + 2·g_sqsk): prefill causal within its chunk, decode over its
  whole cache. Bytes: q, the output and the new k and v for every query token, and the cached
  KV (sk - sq per request) once. None without an iteration.
- Fused MoE (vLLM's `outplace_fused_experts`, `inplace_fused_experts`, `rocm_aiter_fused_moe`;
  AITER's `fmoe`, `fmoe_g1u1`, `fmoe_fp8_blockscale_g1u1`): T tokens of H, E experts, each with
  w1 [E, g·I, H] (g = 2 when gated: gate and up stacked) and w2 [E, H, I], top-k routing. FLOPs
  2·T·k·H·I·g + 2·T·k·I·H + T·H·(2k - 1) (the weighted sum); bytes the tokens in and out and
  the weights of the experts expected to be hit, E·(1 - ((E - k)/E)^T), each read once.
  Weights packed below a byte (int4, fp4) get none: their shapes are not the matrices'. Its
  math is judged at the tokens' precision, as TraceLens does.
- Transformer Engine's GEMM (`tex_ts::te_gemm_ts`): A, B and D at inputs 0, 5 and 10, the
  transposes at 4 and 9, the bias at 14: 2MNK (+MN with a bias); bytes A, B, D and the bias.
"""

from __future__ import annotations

from typing import Any

from .iterations import Iteration
from .work import ATTENTION, GEMM, Work, count, size

BACKWARD_FACTOR = 2.5  # as perf_model.BACKWARD_ATTENTION_FACTOR (FlashAttention-2's count)
VARLEN_FORWARD = "flash_attn::_flash_attn_varlen_forward"
VARLEN_BACKWARD = "flash_attn::_flash_attn_varlen_backward"
# Where each paged-attention op keeps q, k and v among its inputs.
_PAGED = {
    "vllm::unified_attention_with_output": (0, 1, 2),
    "aiter::mha_varlen_fwd": (0, 1, 2),
    "aiter::mha_batch_prefill": (0, 1, 2),
    "aiter::fmha_v3_varlen_fwd": (0, 1, 2),
    "sglang_profiler::attention_paged_attention_ragged": (2, 3, 4),
}
# Where each fused-MoE op keeps its output, the tokens, w1, w2, and where its top-k is:
# ("dims", i): the width of input i (the routing weights [T, k]); ("concrete", i): a scalar.
_MOE = {
    "vllm::outplace_fused_experts": (0, 0, 1, 2, ("dims", 3)),
    "vllm::inplace_fused_experts": (0, 0, 1, 2, ("dims", 3)),
    "vllm::rocm_aiter_fused_moe": (0, 0, 1, 2, ("dims", 3)),
    "aiter::fmoe": (0, 1, 2, 3, ("concrete", 8)),
    "aiter::fmoe_g1u1": (0, 1, 2, 3, ("concrete", 8)),
    "aiter::fmoe_fp8_blockscale_g1u1": (0, 1, 2, 3, ("concrete", 8)),
}
TE_GEMM = "tex_ts::te_gemm_ts"
MODELLED = frozenset({VARLEN_FORWARD, VARLEN_BACKWARD, TE_GEMM, *_PAGED, *_MOE})
NEEDS_ITERATION = frozenset(_PAGED)


def base_name(name: str) -> str:
    """SGLang's profiler writes its attention op with a number after it (`..._ragged_100`):
    the op without it."""
    head, _, tail = name.rpartition("_")
    return head if tail.isdigit() and head in _PAGED else name


def work_of(
    name: str, dims: list[Any], types: list[str], concrete: Any, iteration: Iteration | None
) -> Work | None:
    """One call's work; None where the op is not one of these or its inputs do not say."""
    name = base_name(name)
    if name in _PAGED:
        return _paged(_PAGED[name], dims, types, iteration) if iteration else None
    if name == VARLEN_FORWARD:
        return _varlen(dims[0:3], dims[3], dims[4], types[0], concrete, (5, 6, 9))
    if name == VARLEN_BACKWARD:
        forward = _varlen(dims[1:4], dims[9], dims[10], types[1], concrete, (11, 12, 15))
        if forward is None:
            return None
        moved = 2 * (count(dims[1]) + count(dims[2]) + count(dims[3])) + 2 * count(dims[0])
        return Work(ATTENTION, int(forward.flops * BACKWARD_FACTOR), moved * size(types[1]),
                    types[1])  # fmt: skip
    if name in _MOE:
        return _moe(_MOE[name], dims, types, concrete)
    if name == TE_GEMM:
        return _te_gemm(dims, types, concrete)
    return None


def _varlen(
    qkv: list[Any], cu_q: Any, cu_k: Any, dtype: str, concrete: Any, at: tuple[int, int, int]
) -> Work | None:
    q, k, v = qkv
    if len(q) != 3 or len(k) != 3 or len(v) != 3 or not isinstance(concrete, list):
        return None
    n_q, n_k = cu_q[0] - 1, cu_k[0] - 1
    longest_q, longest_k = int(float(concrete[at[0]])), int(float(concrete[at[1]]))
    causal = str(concrete[at[2]]).strip() == "True"
    if n_q != n_k or n_q < 1 or longest_q > q[0] or longest_k > k[0]:
        return None
    heads, d, d_v = q[1], q[2], v[2]
    pairs = longest_q * longest_k
    if n_q > 1:  # the rest, equal: the least sum of Lq·Lk the totals allow
        pairs += (n_q - 1) * ((q[0] - longest_q) // (n_q - 1)) * ((k[0] - longest_k) // (n_q - 1))
    flops = 2 * heads * pairs * (d + d_v)
    if causal:
        flops //= 2
    moved = count(q) + count(k) + count(v) + q[0] * heads * d_v
    return Work(ATTENTION, flops, moved * size(dtype), dtype)


def _paged(
    at: tuple[int, int, int], dims: list[Any], types: list[str], it: Iteration
) -> Work | None:
    q, k, v = dims[at[0]], dims[at[1]], dims[at[2]]
    if len(q) < 3 or len(k) < 2 or len(v) < 2:
        return None
    heads, d, kv_heads, d_v = q[-2], q[-1], k[-2], v[-1]
    flops = heads * (d + d_v) * (2 * it.c_sqsk - it.c_sqsq + 2 * it.g_sqsk)
    dtype = types[at[0]]
    per_query = heads * d + heads * d_v + kv_heads * d + kv_heads * d_v
    cached = (it.c_sk - it.c_sq + it.g_sk - it.g_sq) * kv_heads * (d + d_v)
    moved = ((it.c_sq + it.g_sq) * per_query + cached) * size(dtype)
    return Work(ATTENTION, flops, moved, dtype, context=it.label)


def _moe(
    at: tuple[int, int, int, int, tuple[str, int]], dims: list[Any], types: list[str], concrete: Any
) -> Work | None:
    out_at, x_at, w1_at, w2_at = at[:4]
    x, w1, w2 = dims[x_at], dims[w1_at], dims[w2_at]
    where, i = at[4]
    if where == "dims":
        topk = dims[i][-1]
    else:
        topk = int(concrete[i]) if isinstance(concrete, list) and str(concrete[i]).isdigit() else 0
    if len(x) != 2 or len(w1) != 3 or len(w2) != 3:
        return None
    tokens, hidden = x
    experts, inter = w1[0], w2[2]
    if not (0 < topk <= experts and tokens > 0):
        return None
    if w1[2] != hidden or w2[1] != hidden or w2[0] != experts or w1[1] not in (inter, 2 * inter):
        return None  # packed weights (int4, fp4), or not this layout
    gated = 2 if w1[1] == 2 * inter else 1
    flops = 2 * tokens * topk * hidden * inter * (gated + 1) + tokens * hidden * (2 * topk - 1)
    hit = experts * (1 - ((experts - topk) / experts) ** tokens)  # expected experts routed to
    weights = int(hit * (gated + 1) * inter * hidden * size(types[w1_at]))
    moved = tokens * hidden * (size(types[x_at]) + size(types[out_at])) + weights
    return Work(GEMM, flops, moved, types[x_at])  # its math runs at the tokens' precision


def _te_gemm(dims: list[Any], types: list[str], concrete: Any) -> Work | None:
    a, b, out = dims[0], dims[5], dims[10]
    if len(a) != 2 or len(b) != 2 or len(out) != 2 or not isinstance(concrete, list):
        return None
    trans_a, trans_b = str(concrete[4]) == "1", str(concrete[9]) == "1"
    m, k = (a[0], a[1]) if trans_a else (a[1], a[0])
    n, k_b = (b[1], b[0]) if trans_b else (b[0], b[1])
    if k != k_b:
        return None
    # Kineto writes an empty tensor (no bias) as [0].
    bias = dims[14] if len(dims) > 14 and isinstance(dims[14], list) and count(dims[14]) else None
    flops = 2 * m * n * k + (m * n if bias else 0)
    moved = count(a) * size(types[0]) + count(b) * size(types[5]) + count(out) * size(types[10])
    if bias:
        moved += count(bias) * size(types[14])
    return Work(GEMM, flops, moved, types[0])
