"""Serving engines' and training libraries' ops (analysis/serving_work.py): varlen and paged
attention, fused MoE and Transformer Engine's GEMM, each against a count worked by hand; paged
attention with the KV lengths of the iteration it ran in, eager and graph-replayed; and the
shared vLLM and SGLang decode pairs against TraceLens's attention sheets."""

from __future__ import annotations

import csv

import pytest

from tests.conftest import shared_model
from tests.model.test_replay_work import _write
from tui.model.analysis.iterations import Iteration
from tui.model.analysis.perf_model import work_of
from tui.model.analysis.replay_work import with_replays
from tui.model.analysis.roofline import roofline
from tui.model.analysis.work import ATTENTION, GEMM
from tui.model.ingest import load_trace

BF16 = "c10::BFloat16"
DECODE = Iteration(0, 0, 0, 0, 32, 55086, 32, 55086)  # 32 requests, 55,086 KV tokens in all
UNIFIED = "vllm::unified_attention_with_output"
QKV = [[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]


def _args(dims, types, concrete=None):
    return {"Input Dims": dims, "Input type": types, "Concrete Inputs": concrete or []}


def _varlen_forward(causal="False"):
    concrete = [""] * 16
    concrete[5], concrete[6], concrete[9] = "50", "50", causal  # longest q and k; causal
    dims = [[100, 8, 64]] * 3 + [[4], [4]] + [[]] * 11
    return _args(dims, [BF16] * 3 + ["int"] * 2 + [""] * 11, concrete)


def test_varlen_attention_counts_the_least_the_lengths_allow():
    # 3 sequences, 100 tokens, the longest 50: 50x50 + 2 x 25x25 query-key pairs
    fwd = work_of("flash_attn::_flash_attn_varlen_forward", _varlen_forward())
    assert (fwd.kind, fwd.flops) == (ATTENTION, 2 * 8 * 3750 * 128)
    assert fwd.bytes == (3 * 100 * 8 * 64 + 100 * 8 * 64) * 2  # q, k, v, out
    causal = work_of("flash_attn::_flash_attn_varlen_forward", _varlen_forward("True"))
    assert causal.flops == fwd.flops // 2
    concrete = [""] * 16
    concrete[11], concrete[12], concrete[15] = "50", "50", "False"
    dims = [[100, 8, 64]] * 4 + [[]] * 5 + [[4], [4]] + [[]] * 5
    bwd = work_of(
        "flash_attn::_flash_attn_varlen_backward",
        _args(dims, [BF16] * 4 + [""] * 5 + ["int"] * 2 + [""] * 5, concrete),
    )
    assert bwd.flops == fwd.flops * 5 // 2
    # dout, out, q, k, v read; dq, dk, dv written
    assert bwd.bytes == (2 * 3 * 51200 + 2 * 51200) * 2


def test_paged_attention_takes_the_kv_lengths_of_its_iteration():
    args = _args(QKV, [BF16] * 4 + ["", "", "", BF16])
    assert work_of(UNIFIED, args) is None  # the shapes do not hold the KV lengths
    decode = work_of(UNIFIED, args, DECODE)
    assert decode.flops == 64 * 128 * 2 * 55086  # TraceLens: 0.902529024 GFLOPS
    # q, out, the new k and v per query token; the cached KV once: TraceLens's 108.09 MiB
    assert decode.bytes == (32 * 9216 + (55086 - 32) * 8 * 128) * 2 == 113_340_416
    assert decode.context == "KV 55,086 for 32 queries"
    prefill = work_of(UNIFIED, args, Iteration(10, 30, 100, 300, 0, 0, 0, 0))
    assert prefill.flops == 64 * 128 * (2 * 300 - 100)  # causal within the chunk
    assert prefill.bytes == (10 * 9216 + 20 * 8 * 128) * 2
    sglang = "sglang_profiler::attention_paged_attention_ragged_7"  # a number after its name
    paged = [[32, 32, 128], [10905190400], [32, 32, 128], [835874, 1, 8, 128], [835874, 1, 8, 128]]
    it = Iteration(0, 0, 0, 0, 32, 32785, 32, 32785)
    assert work_of(sglang, _args(paged, [BF16, "unsigned char", BF16, BF16, BF16]), it).flops == (
        32 * 256 * 2 * 32785  # TraceLens: 0.53714944 GFLOPS
    )


def test_fused_moe_counts_the_experts_routed_to():
    dims = [[4, 16], [8, 64, 16], [8, 16, 32], [4, 2], [4, 2]]  # 8 experts, gated, top 2
    moe = work_of("vllm::outplace_fused_experts", _args(dims, [BF16] * 3 + ["float", "int"]))
    up, down, combine = 2 * 4 * 2 * 16 * 32 * 2, 2 * 4 * 2 * 32 * 16, 4 * 16 * 3
    assert (moe.kind, moe.flops) == (GEMM, up + down + combine)
    hit = 8 * (1 - (6 / 8) ** 4)  # experts expected to get a token
    assert moe.bytes == 2 * 4 * 16 * 2 + int(hit * 3 * 32 * 16 * 2)
    plain = [[4, 16], [8, 32, 16], [8, 16, 32], [4, 2], [4, 2]]  # not gated
    assert work_of("vllm::inplace_fused_experts", _args(plain, [BF16] * 5)).flops == (
        2 * 4 * 2 * 16 * 32 * 2 + combine
    )
    packed = [[4, 16], [8, 64, 8], [8, 16, 16], [4, 2], [4, 2]]  # fp4 in bytes: not matrices
    assert work_of("vllm::outplace_fused_experts", _args(packed, [BF16] * 5)) is None
    concrete = [""] * 8 + ["2"]
    fmoe = work_of("aiter::fmoe_g1u1", _args([[4, 16], *dims[:3]], [BF16] * 4, concrete))
    assert fmoe.flops == moe.flops


def test_transformer_engine_gemm():
    dims = [[256, 128]] + [[]] * 4 + [[64, 128]] + [[]] * 4 + [[64, 256]] + [[]] * 3 + [[256]]
    concrete = [""] * 15
    concrete[4], concrete[9] = "1", "0"  # A transposed, B not
    te = work_of("tex_ts::te_gemm_ts", _args(dims, [BF16] * 15, concrete))
    assert te.flops == 2 * 256 * 64 * 128 + 256 * 64  # the bias adds MN
    assert te.bytes == (256 * 128 + 64 * 128 + 64 * 256 + 256) * 2
    concrete[9] = "1"  # B [64, 128] transposed: K would be 64, not A's 128
    assert work_of("tex_ts::te_gemm_ts", _args(dims, [BF16] * 15, concrete)) is None


def _x(name, cat, ts, dur, where, **args):
    return {"ph": "X", "name": name, "cat": cat, **where, "ts": ts, "dur": dur, "args": args}


CPU, GPU = {"pid": 1, "tid": 1}, {"pid": 0, "tid": 7}
ITERATION = "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk{k}sqsq32sqsk{k})"
SHAPES = {"Input Dims": QKV, "Input type": [BF16] * 4 + ["", "", "", BF16]}


def test_eager_calls_in_two_iterations_are_two_rows(tmp_path):
    events = []
    for i, kv in enumerate((55086, 1000)):
        t = 1000 * i
        events += [
            _x(ITERATION.format(k=kv), "user_annotation", t, 500, CPU),
            _x(UNIFIED, "cpu_op", t + 10, 50, CPU, **SHAPES, **{"Concrete Inputs": [""] * 8}),
            _x("cudaLaunchKernel", "cuda_runtime", t + 20, 5, CPU, correlation=i + 1),
            _x("kernel_unified_attention_2d", "kernel", t + 30, 40, GPU, correlation=i + 1),
        ]
    # The GPU's copy of the first iteration lags into the second's calls: the CPU's span counts.
    events.append(_x(ITERATION.format(k=55086), "gpu_user_annotation", 30, 1200, GPU))
    trace = load_trace(_write(tmp_path / "t.json", events))
    rows = {row.work.context: row for row in roofline(trace).rows if row.name == UNIFIED}
    assert set(rows) == {"KV 55,086 for 32 queries", "KV 1,000 for 32 queries"}
    assert rows["KV 1,000 for 32 queries"].work.flops == 64 * 128 * 2 * 1000
    assert all(row.calls == 1 and row.gpu_ns == 40_000 for row in rows.values())


def test_a_replayed_call_takes_the_replays_iteration(tmp_path):
    capture = _write(tmp_path / "capture.json", [
        _x("cudaStreamBeginCapture", "cuda_runtime", 0, 1, CPU),
        _x(UNIFIED, "cpu_op", 2, 10, CPU, **SHAPES, **{"Concrete Inputs": [""] * 8}),
        _x("cudaLaunchKernel", "cuda_runtime", 3, 2, CPU, correlation=900),
        _x("cudaStreamEndCapture", "cuda_runtime", 20, 1, CPU),
    ])  # fmt: skip
    replay = _write(tmp_path / "replay.json", [
        _x(ITERATION.format(k=4000), "user_annotation", 1000, 300, CPU),
        _x("cudaGraphLaunch", "cuda_runtime", 1010, 3, CPU, correlation=10),
        _x("kernel_unified_attention_2d", "kernel", 1020, 25, GPU, correlation=10),
    ])  # fmt: skip
    trace = load_trace(replay)
    r = with_replays(roofline(trace), trace, load_trace(capture))
    (row,) = [row for row in r.rows if row.name == UNIFIED]
    assert row.work.flops == 64 * 128 * 2 * 4000 and row.work.context == "KV 4,000 for 32 queries"
    assert (row.calls, row.gpu_ns) == (1, 25_000)


PAIRS = [
    ("mi300_vllm_graph_execution_full.json.gz", "mi300_vllm_graph_capture_full.pt.trace.json.gz",
     "mi300_vllm_graph_execution_full"),
    ("mi300_sglang_qwen3_8b_decode.json.gz", "mi300_sglang_qwen3_8b_decode_capture_bs32.json.gz",
     "mi300_sglang_qwen3_8b_decode"),
]  # fmt: skip


@pytest.mark.parametrize(("replay", "capture", "report"), PAIRS, ids=["vllm", "sglang"])
def test_replayed_paged_attention_equals_tracelens(shared, replay, capture, report):
    """FLOPs and bytes per call within 1%, kernel time within 1%, of TraceLens's
    InferenceAttention sheet (its KV lengths from the same iteration annotation)."""
    sheet = shared / "tracelens" / "reports" / report / "InferenceAttention_fwd.csv"
    with sheet.open(encoding="utf-8") as f:
        theirs = [r for r in csv.DictReader(f) if r["GFLOPS_first"] not in ("", "0.0")]
    trace = shared_model(shared / "tracelens" / replay)
    r = with_replays(roofline(trace), trace, shared_model(shared / "tracelens" / capture))
    ours = [row for row in r.rows if row.work.kind == ATTENTION]
    assert ours and theirs
    for row in ours:
        assert row.work.flops == pytest.approx(float(theirs[0]["GFLOPS_first"]) * 1e9, rel=0.01)
        mib = float(theirs[0]["Data Moved (MB)_first"])
        assert row.work.bytes == pytest.approx(mib * 2**20, rel=0.01)
    their_us = sum(float(t["Kernel Time (µs)_sum"]) for t in theirs)
    assert sum(row.gpu_ns for row in ours) / 1e3 == pytest.approx(their_us, rel=0.01)
    assert sum(row.calls for row in ours) == sum(int(t["name_count"]) for t in theirs)
    assert all(row.work.context.startswith("KV ") for row in ours)


HOSTILE = [
    ("flash_attn::_flash_attn_varlen_forward", [[100, 8, 64]] * 3 + [[1], [1]], ["inf"] * 12),
    ("flash_attn::_flash_attn_varlen_forward", [[100, 8, 64]] * 3 + [[4], [4]], ["1e400"] * 12),
    ("flash_attn::_flash_attn_varlen_forward", [{"a": 1, "b": 2, "c": 3}] * 3 + [[3], [3]], []),
    ("flash_attn::_flash_attn_varlen_backward", [], []),
    ("vllm::outplace_fused_experts", [[-1, 16], [4, 64, 16], [4, 16, 32], [4, 4]], []),
    ("vllm::outplace_fused_experts", [[10**400, 16], [8, 64, 16], [8, 16, 32], [4, 2]], []),
    ("vllm::outplace_fused_experts", [[4, 16], [2, 64, 16], [2, 16, 32], [4, 4]], []),  # k > E
    ("vllm::outplace_fused_experts", [[4, 16], [0, 64, 16], [0, 16, 32], [4, 2]], []),
    ("aiter::fmoe", [[4, 16]] * 2 + [[8, 64, 16], [8, 16, 32]], ["2"]),
    ("tex_ts::te_gemm_ts", [{"x": 1}] * 15, [""] * 15),
    ("vllm::unified_attention_with_output", [None, None, None], []),
]


@pytest.mark.parametrize(("name", "dims", "concrete"), HOSTILE)
def test_inputs_not_as_the_op_writes_them_get_no_number(name, dims, concrete):
    types = [BF16] * max(len(dims), 16)
    assert work_of(name, _args(dims, types[: len(dims)], concrete), DECODE) is None
