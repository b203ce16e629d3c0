"""The performance model: hand-computed FLOPs and bytes for every formula, the peak table, and
TraceLens's own roofline sheets for the shared H100 and MI300 traces as an independent check."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from tests.conftest import shared_model
from tests.model.test_above_roof import write_calls
from tests.tui.helpers import run
from tui.model.analysis.device_peaks import peaks_for
from tui.model.analysis.perf_model import work_of
from tui.model.analysis.roofline import roofline
from tui.model.analysis.work import ATTENTION, ELEMENTWISE, GEMM, NORM, REDUCTION
from tui.model.ingest import load_trace

BF16 = "c10::BFloat16"


def args(dims, types, concrete=None):
    return {"Input Dims": dims, "Input type": types, "Concrete Inputs": concrete or []}


def test_gemm_formulas():
    mm = work_of("aten::mm", args([[64, 32], [32, 16]], ["float", "float"]))
    assert (mm.kind, mm.flops, mm.bytes) == (
        GEMM,
        2 * 64 * 16 * 32,
        (64 * 32 + 32 * 16 + 64 * 16) * 4,
    )
    addmm = work_of(
        "aten::addmm", args([[16], [64, 32], [32, 16], [], []], [BF16] * 3 + ["Scalar"] * 2)
    )
    assert addmm.flops == 2 * 64 * 16 * 32 + 64 * 16  # the bias add
    assert addmm.bytes == (16 + 64 * 32 + 32 * 16 + 64 * 16) * 2
    bmm = work_of("aten::bmm", args([[8, 64, 32], [8, 32, 16]], [BF16, BF16]))
    assert bmm.flops == 8 * 2 * 64 * 16 * 32
    baddbmm = work_of("aten::baddbmm", args([[8, 64, 16], [8, 64, 32], [8, 32, 16]], [BF16] * 3))
    assert baddbmm.flops == 8 * (2 * 64 * 16 * 32 + 64 * 16)
    assert work_of("aten::mm", args([[64, 32], [31, 16]], ["float", "float"])) is None  # K differs
    assert work_of("aten::matmul", args([[64, 32], [32, 16]], ["float", "float"])) is None


def test_attention_formulas():
    q = [2, 8, 128, 64]  # B, H, N, d
    sdpa = args([q, q, q, [], [], [], []], [BF16] * 3 + ["Scalar"] * 4, ["", "", "", "0.", "False"])
    w = work_of("aten::_scaled_dot_product_flash_attention", sdpa)
    assert (w.kind, w.flops) == (ATTENTION, 4 * 2 * 8 * 128 * 128 * 64)
    assert w.bytes == 4 * (2 * 8 * 128 * 64) * 2  # q, k, v and the output
    causal = dict(sdpa, **{"Concrete Inputs": ["", "", "", "0.", "True"]})
    assert work_of("aten::_scaled_dot_product_flash_attention", causal).flops == w.flops // 2
    # The efficient kernel's first flag is compute_log_sumexp; is_causal comes after dropout_p.
    efficient = args(
        [q, q, q, [], [], [], []],
        [BF16] * 3 + ["Scalar"] * 4,
        ["", "", "", "", "True", "0.", "False"],
    )
    name = "aten::_scaled_dot_product_efficient_attention"
    assert work_of(name, efficient).flops == w.flops
    efficient["Concrete Inputs"] = ["", "", "", "", "False", "0.", "True"]
    assert work_of(name, efficient).flops == w.flops // 2
    seq_first = [2, 128, 8, 64]  # B, N, H, d: the flash kernel's own layout
    inner = args([seq_first] * 3, [BF16] * 3)
    assert work_of("aten::_flash_attention_forward", inner).flops == w.flops


def test_elementwise_and_what_is_not_modelled():
    add = work_of("aten::add", args([[4, 1, 8], [3, 1], []], ["float", "float", "Scalar"]))
    assert (add.kind, add.flops) == (ELEMENTWISE, 4 * 3 * 8)  # broadcast to [4, 3, 8]
    assert add.bytes == (32 + 3 + 96) * 4
    scaled = work_of("aten::mul", args([[4, 8], []], ["float", "double"]))
    assert (scaled.flops, scaled.bytes) == (32, 2 * 32 * 4 + 8)  # a 0-dim double
    alpha = work_of("aten::add", args([[4, 8], [], []], ["c10::Half", "Scalar", "Scalar"]))
    assert alpha.bytes == 2 * 32 * 2 + 4  # a bare Scalar as 4 bytes; alpha not counted
    assert work_of("aten::add", args([[4, 8], [3, 8]], ["float", "float"])) is None  # no broadcast
    first = work_of("aten::mul", args([[], [4, 8]], ["double", "float"]))
    assert (first.flops, first.bytes, first.dtype) == (32, 2 * 32 * 4 + 8, "float")  # 2.0 * x
    broadcast = work_of("aten::add_", args([[2, 320, 8, 8], [1, 320, 1, 1], []], [BF16] * 3))
    # Ours: the [1, C, 1, 1] operand at its own size (TraceLens: at the output's; README).
    assert broadcast.bytes == (2 * 2 * 320 * 64 + 320) * 2
    assert work_of("aten::mm", None) is None and work_of("aten::mm", {"Input Dims": 3}) is None
    assert work_of("aten::mm", args([[2, 2], [2, 2]], ["weird", "weird"])) is None


def test_softmax_and_layer_norm_backward():
    soft = work_of("aten::_softmax", args([[64, 12, 8, 8], [], []], [BF16, "Scalar", "Scalar"]))
    elements = 64 * 12 * 64
    assert (soft.kind, soft.flops, soft.bytes) == (NORM, 5 * elements, 2 * elements * 2)
    # Older torch writes no Concrete Inputs: the normalised shape is the weight's.
    dims = [[1024, 512], [1024, 512], [], [1024, 1], [1024, 1], [512], [512], []]
    types = ["float", "float", "", "float", "float", "float", "float", ""]
    back = work_of("aten::native_layer_norm_backward", {"Input Dims": dims, "Input type": types})
    assert (back.flops, back.bytes) == (9 * 1024 * 512, (3 * 1024 * 512 + 4 * 512) * 4)
    given = args(dims, types, ["", "", "[512]", "", "", "", "", "[True, True, True]"])
    assert work_of("aten::native_layer_norm_backward", given) == back
    bad = args(dims, types, ["", "", "[3]", "", "", "", "", ""])
    assert work_of("aten::native_layer_norm_backward", bad) is None  # not the input's last dims


def test_library_gemms_unary_ops_rms_norm_and_reductions():
    gemm = work_of("vllm::rocm_unquantized_gemm", args([[32, 64], [128, 64], [128]], [BF16] * 3))
    assert (gemm.kind, gemm.flops) == (GEMM, 2 * 32 * 128 * 64 + 32 * 128)
    assert gemm.bytes == (32 * 64 + 128 * 64 + 32 * 128 + 128) * 2
    plain = work_of("aiter::gemm_a16w16", args([[2, 16, 64], [128, 64], []], [BF16, BF16, ""]))
    assert plain.flops == 2 * 32 * 128 * 64  # x [2, 16, K]: M = 32 rows, no bias
    assert work_of("aiter::gemm_a16w16", args([[32, 63], [128, 64]], [BF16] * 2)) is None
    # copy_(self, src): from src's dtype to self's, each element read once and written once.
    copy = work_of("aten::copy_", args([[4, 8], [4, 8], []], [BF16, "float", "Scalar"]))
    assert (copy.kind, copy.flops, copy.bytes) == (ELEMENTWISE, 32, 32 * (2 + 4))
    assert work_of("aten::pow", args([[4, 8], []], ["float", "Scalar"])).bytes == 32 * 8
    assert work_of("aten::pow", args([[4, 8], [4, 8]], ["float", "float"])) is None  # binary
    m, n = 32, 256
    norm = work_of("aiter::rms_norm", args([[m, n], [n], [], []], [BF16, BF16, "Scalar", "Scalar"]))
    assert (norm.kind, norm.flops) == (NORM, 4 * m * n + 2 * m)
    assert norm.bytes == (2 * m * n + n) * 2  # input, returned output, weight
    fused = work_of("aiter::add_rmsnorm", args([[m, n]] * 4 + [[n], []], [BF16] * 5 + ["Scalar"]))
    assert fused.flops == 4 * m * n + 2 * m + m * n and fused.bytes == (4 * m * n + n) * 2
    total = work_of("aten::sum", args([[10, 1000]], [BF16]))
    assert (total.kind, total.flops, total.bytes) == (REDUCTION, 10_000, (10_000 + 1) * 2)
    rows = work_of("aten::mean", args([[10, 8, 7, 7], [], [], []], [BF16, "ScalarList", "Scalar",
                                      ""], ["", "[-1, -2]", "True", ""]))  # fmt: skip
    assert rows.bytes == (10 * 8 * 49 + 10 * 8) * 2  # the output is [10, 8, 1, 1]
    e = 4 * 197 * 768
    ln = work_of("aten::layer_norm", args([[4, 197, 768], [], [768], [768], [], []],
                 [BF16, "ScalarList", BF16, BF16, "Scalar", "Scalar"],
                 ["", "[768]", "", "", "1e-12", "True"]))  # fmt: skip
    assert (ln.kind, ln.flops, ln.bytes) == (NORM, 5 * e + 6 * 768, (2 * e + 6 * 768) * 2)
    bn = work_of("aten::native_batch_norm", args([[10, 64, 56, 56], [64], [64], [64], [64]],
                 [BF16] * 5))  # fmt: skip
    assert bn.flops == 5 * 10 * 64 * 56 * 56 + 6 * 64  # over dim 1's 64 channels
    back = work_of("aten::native_batch_norm_backward", args([[10, 64, 56, 56]] * 2, [BF16] * 2))
    assert (back.flops, back.bytes) == (9 * 2007040, (3 * 2007040 + 4 * 64) * 2)


def test_the_peak_table_and_the_override(monkeypatch):
    monkeypatch.delenv("TRACE_TUI_PEAKS", raising=False)
    assert peaks_for("NVIDIA H100 80GB HBM3").bf16 == 989.4
    assert peaks_for("NVIDIA H100 PCIe").device == "H100 PCIe"  # the longer prefix wins
    assert peaks_for("AMD Instinct MI300X").hbm_tbs == 5.3
    assert peaks_for("Some New GPU") is None
    mine = peaks_for("Some New GPU", "bf16=500,hbm=2")
    assert (mine.bf16, mine.hbm_tbs, mine.fp32) == (500.0, 2.0, None)
    monkeypatch.setenv("TRACE_TUI_PEAKS", "fp32=70")
    assert peaks_for("NVIDIA H100 80GB HBM3").fp32 == 70.0
    with pytest.raises(ValueError, match="not key=number"):
        peaks_for("x", "bf16=fast")
    with pytest.raises(ValueError, match="unknown key"):
        peaks_for("x", "int4=3")
    with pytest.raises(ValueError, match="more than 0"):
        peaks_for("x", "hbm=0")
    assert peaks_for("NVIDIA H100 NVL").device == "H100 NVL"


REPORTS = [
    ("tracelens/h100_bert_small.json.gz", "h100_gaunernst_bert-small-uncased__1016001"),
    ("tracelens/h100_falconsai_nsfw.json.gz", "h100_Falconsai_nsfw_image_detection__1016002"),
    (
        "tracelens/h100_timesformer.json.gz",
        "h100_facebook_timesformer-base-finetuned-k400__1016002",
    ),
    ("tracelens/mi300_bert_small.json.gz", "mi300_gaunernst_bert-small-uncased__1016001"),
    ("tracelens/h100_qwen1.5_0.5b_chat.json.gz", "h100_Qwen_Qwen1.5-0.5B-Chat__1016005"),
]
SHEETS = (
    "GEMM.csv",
    "SDPA_fwd.csv",
    "BinaryElementwise.csv",
    "UnaryElementwise.csv",
    "RMSNorm_fwd.csv",
    "Normalization.csv",
    "Reduce_fwd.csv",
    "CONV_fwd.csv",
    "CONV_bwd.csv",
    "RoPE_fwd.csv",
)
# TraceLens writes a reduction's output as one element whatever `dim` is (memory_ops.py): its
# FLOPs are compared, not its bytes.
BYTES_DIFFER = {"Reduce_fwd.csv"}


def _key(line):
    """A TraceLens row's name, Input Dims and Concrete Inputs, written as ours are."""

    def again(text):
        return json.dumps(json.loads(text.replace("'", '"')))

    return (
        line["name"],
        again(line["Input Dims_first"]),
        again(line["Concrete Inputs_first"]),
        again(line["Input type_first"]),
    )


def _theirs(shared, report):
    """TraceLens's rows by shape: FLOPs and bytes a call, calls and kernel time summed (it
    splits a shape by strides too)."""
    theirs: dict[tuple[str, ...], dict[str, float]] = {}
    for sheet in SHEETS:
        path = shared / "tracelens" / "reports" / report / sheet
        if not path.exists():
            continue
        for line in csv.DictReader(path.open(encoding="utf-8")):
            if not line["GFLOPS_first"] or not line["Data Moved (MB)_first"]:
                continue  # a dtype it has no size for
            seen = theirs.setdefault(
                _key(line),
                {
                    "flops": float(line["GFLOPS_first"]) * 1e9,
                    "bytes": float(line["Data Moved (MB)_first"]) * 2**20,
                    "calls": 0,
                    "us": 0.0,
                    "bytes_differ": sheet in BYTES_DIFFER,
                },
            )
            seen["calls"] += int(line["name_count"])
            seen["us"] += float(line["Kernel Time (µs)_sum"])
    return theirs


def _same_work(row, t, key):
    assert row.work.flops == pytest.approx(t["flops"], abs=1), key
    if not t["bytes_differ"]:
        assert row.work.bytes == pytest.approx(t["bytes"], abs=1), key


@pytest.mark.parametrize("trace, report", REPORTS, ids=lambda v: v.split("/")[-1][:14])
def test_flops_bytes_and_rates_equal_tracelens_per_unique_shape(shared, trace, report):
    ours = {
        (r.name, r.dims, r.concrete, r.types): r
        for r in roofline(shared_model(shared / trace)).rows
    }
    checked = set()
    for key, t in _theirs(shared, report).items():
        row = ours.get(key)
        if row is None:
            continue  # an op we do not model this way
        _same_work(row, t, key)
        assert row.calls == t["calls"], key
        # Their kernel time summed and ours: the same kernels, so the same rate.
        if t["us"] == 0:  # a copy to itself launches nothing
            assert row.gpu_ns == 0, key
        else:
            assert row.tflops == pytest.approx(row.flops / (t["us"] * 1e3) / 1e3, rel=0.01), key
        checked.add(row.work.kind)
    assert len(checked) >= 2


def test_library_ops_equal_tracelens_on_vllm(shared):
    """vLLM's decode replays CUDA graphs: TraceLens's sheet for the replayed window takes the
    shapes from the capture trace, which is read here (its calls and times are the capture's)."""
    trace = shared_model(shared / "tracelens" / "mi300_vllm_graph_capture_full.pt.trace.json.gz")
    ours = {(r.name, r.dims, r.concrete, r.types): r for r in roofline(trace).rows}
    names = set()
    for key, t in _theirs(shared, "mi300_vllm_graph_execution_full").items():
        row = ours.get(key)
        if row is not None:
            _same_work(row, t, key)
            names.add(row.name)
    assert {"vllm::rocm_unquantized_gemm", "aiter::rms_norm", "aten::copy_"} <= names


def test_an_ops_details_say_what_it_computed_and_how_fast(shared):
    from tui.model.analysis.ops import op_rows
    from tui.model.present.details import slice_details

    trace = shared_model(shared / REPORTS[0][0])
    big = next(
        int(r)
        for r in op_rows(trace, "aten::addmm")
        if trace.args(int(r))["Input Dims"][0] == [30522]
    )
    work = dict(slice_details(trace, big))["work"]
    assert work.startswith("4.411 GFLOP, 40.07 MB (110.1 FLOP/B); its kernels: 106.86 TFLOP/s")
    assert work.endswith("29.0% of the H100 SXM's roof (memory side)")
    linear = int(op_rows(trace, "aten::linear")[0])
    assert "work" not in dict(slice_details(trace, linear))  # counted through its addmm


def test_convolutions_equal_tracelens_but_where_only_one_gradient_is_asked_for(shared):
    """ResNet on MI300 (fwd and bwd convs, GEMMs, elementwise): everything equal, except the
    first layer's backward, whose output_mask asks for the weight's gradient only (the image
    needs none): TraceLens counts both gradients there, we count the one computed."""
    trace = shared_model(shared / "tracelens" / "mi300_resnet_act_checkpoint_ws8_rank0.json.gz")
    ours = {(r.name, r.dims, r.concrete, r.types): r for r in roofline(trace).rows}
    report = shared / "tracelens" / "reports" / "mi300_resnet_act_checkpoint_recompute"
    equal = halved = 0
    for sheet in SHEETS:
        if not (report / sheet).exists():
            continue
        for line in csv.DictReader((report / sheet).open(encoding="utf-8")):
            row = ours.get(_key(line))
            if row is None:
                continue
            flops = float(line["GFLOPS_first"]) * 1e9
            moved = float(line["Data Moved (MB)_first"]) * 2**20
            if "[False, True" in line["Concrete Inputs_first"]:
                assert (row.work.flops, row.work.bytes) == (flops / 2, moved / 2)
                halved += 1
            else:
                assert row.work.flops == pytest.approx(flops, abs=1)
                if sheet not in BYTES_DIFFER:
                    assert row.work.bytes == pytest.approx(moved, abs=1)
                equal += 1
    assert equal >= 50 and halved == 1


def test_triton_kernels_count_what_inductor_wrote(tmp_path):
    cpu = {"pid": 1, "tid": 1}

    def launcher(name, ts, corr, counts):
        return [
            {"ph": "X", "cat": "cpu_op", "name": name, **cpu, "ts": ts, "dur": 20,
             "args": {"kernel_backend": "triton", **counts}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", **cpu, "ts": ts + 5,
             "dur": 5, "args": {"correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts + 30,
             "dur": 1000, "args": {"correlation": corr}},
        ]  # fmt: skip

    events = launcher("triton_poi_fused_add_0", 0, 1, {"kernel_flop": 10**9, "kernel_num_gb": 0.5})
    events += launcher("triton_tem_fused_mm_1", 2000, 2, {"kernel_flop": 4 * 10**9})
    events += launcher("triton_per_fused_2", 4000, 3, {})
    path = tmp_path / "compiled.json"
    path.write_text(
        json.dumps({"deviceProperties": [{"name": "NVIDIA H100 80GB HBM3"}], "traceEvents": events})
    )
    r = roofline(load_trace(path))
    rows = {row.name: row for row in r.rows}
    add = rows["triton_poi_fused_add_0"]
    assert (add.work.flops, add.work.bytes, add.work.kind) == (10**9, 5 * 10**8, "Triton")
    assert add.tflops == pytest.approx(1.0) and add.tbs == pytest.approx(0.5)
    share, side = r.percent_of_peak(add)  # 2 FLOP/B: memory-bound whatever its dtype
    assert side == "memory" and share == pytest.approx(100 * 0.5 / 3.35)
    mm = rows["triton_tem_fused_mm_1"]  # no bytes written, dtype unknown: no percentage
    assert mm.work.flops == 4 * 10**9 and r.percent_of_peak(mm) is None
    assert "triton_per_fused_2" not in rows  # Inductor counted nothing: no number


def test_shape_args_read_in_bulk_equal_those_read_one_at_a_time(tmp_path, monkeypatch):
    from tui.model.ingest.chrome_json import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 512)  # many chunks
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": k * 10,
         "dur": 5, "args": {"Input Dims": [[k + 1, 2], [2, 3]], "Input type": ["float"] * 2,
                            "Concrete Inputs": ["", ""], "other": {"deep": [k]}}}
        for k in range(60)
    ]  # fmt: skip
    events[30]["args"]["x"] = float("nan")  # a chunk msgspec refuses: read event by event
    events[31].pop("args")
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_trace(path)
    rows = np.arange(len(trace.slices))
    bulk = trace.args_reader.shapes(trace.slices.event[rows])
    for row, got in zip(rows.tolist(), bulk, strict=True):
        one = trace.args(row)
        if one is None:
            assert got is None
            continue
        keys = ("Input Dims", "Input type", "Concrete Inputs")
        assert {k: got[k] for k in keys} == {k: one[k] for k in keys}


def _fp32_mm_trace(tmp_path, kernels):
    """aten::mm [4096,4096] x [4096,4096] in fp32 on an A100, one call per (kernel name, us)."""
    mm = [("aten::mm", [[4096, 4096], [4096, 4096]], kernel, dur) for kernel, dur in kernels]
    return load_trace(write_calls(tmp_path, mm))


@pytest.mark.parametrize(
    "kernel",
    [
        "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_warpsize2x2x1",
        "ampere_s1688gemm_fp32_128x128_ldg4_nn",
        "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
        "Cijk_Alik_Bljk_S_B_MT128x128x32_XF32",  # hipBLASLt
    ],
)
def test_an_fp32_gemm_on_tensor_cores_is_judged_against_the_tf32_peak(tmp_path, kernel):
    r = roofline(_fp32_mm_trace(tmp_path, [(kernel, 1000)]))
    (row,) = r.rows
    assert row.work.math == "tf32"
    tflops = 2 * 4096**3 / 1e-3 / 1e12  # 137.4 TFLOP/s: 7x the A100's fp32 peak, under TF32's
    assert row.tflops == pytest.approx(tflops)
    share, side = r.percent_of_peak(row)
    assert side == "compute" and share == pytest.approx(100 * tflops / 156.0)
    assert r.dtype_class() == "tf32"


@pytest.mark.parametrize(
    "kernel",
    [
        "ampere_sgemm_128x128_nn",
        # cuBLAS's xmma fp32 path (fp32 data and math, `ffma`): as it ran on an H200, TF32 off.
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4",
    ],
)
def test_an_fp32_gemm_on_cuda_cores_is_judged_against_the_fp32_peak(tmp_path, kernel):
    r = roofline(_fp32_mm_trace(tmp_path, [(kernel, 10_000)]))
    (row,) = r.rows
    assert row.work.math == ""
    share, side = r.percent_of_peak(row)  # 13.7 TFLOP/s of the A100's fp32 19.5
    assert side == "compute" and share == pytest.approx(100 * (2 * 4096**3 / 1e-2 / 1e12) / 19.5)
    assert r.dtype_class() == "fp32"


def test_an_fp32_gemm_on_cuda_cores_keeps_the_fp32_peak_and_the_two_are_two_rows(tmp_path):
    kernels = [("ampere_sgemm_128x64_nn", 10_000), ("ampere_s1688gemm_fp32", 1000)]
    r = roofline(_fp32_mm_trace(tmp_path, kernels))
    by_math = {row.work.math: row for row in r.rows}
    assert set(by_math) == {"", "tf32"}
    share, _ = r.percent_of_peak(by_math[""])  # 13.7 TFLOP/s of the fp32 19.5
    assert share == pytest.approx(100 * (2 * 4096**3 / 1e-2 / 1e12) / 19.5)


def test_the_mfu_weighs_each_op_by_the_peak_of_the_precision_it_ran_in(tmp_path):
    kernels = [("ampere_sgemm_128x64_nn", 10_000), ("ampere_s1688gemm_fp32", 1000)]
    trace = _fp32_mm_trace(tmp_path, kernels)
    r = roofline(trace)
    flops = 2 * 4096**3
    at_peak_ns = flops / 19.5e3 + flops / 156e3  # TFLOP/s = 1e3 FLOPs per ns
    window = r.utilisation("all", 0, trace.span_ns)
    assert window.mfu == pytest.approx(at_peak_ns / trace.span_ns)
    gpu_span = trace.span_ns - 60_000  # no steps: the summary's MFU is over the GPU's span
    window = r.utilisation("all", 60_000, trace.span_ns, (0, trace.span_ns))
    assert window.mfu == pytest.approx(at_peak_ns / gpu_span)
    assert r.peak_classes() in ("fp32+tf32", "tf32+fp32")
    out = run("summary", "--roofline", trace.path)
    assert out.returncode == 0, out.stderr
    assert f"MFU {window.mfu:.2%} of {r.peak_classes()} peak" in out.stdout
    assert "float (tf32)" in out.stdout


def test_each_steps_flops_count_the_calls_in_it_whatever_order_the_threads_give(tmp_path):
    """One shape called on two threads: the first thread's call is in step 2, the second's two
    in step 1, so the shape's calls come in that order, not by time. Each step counts its own."""
    mm = {"Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["float"] * 2}
    events = [
        {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "pid": 1, "tid": 1,
         "ts": 10_000 * (n - 1), "dur": 10_000}
        for n in (1, 2)
    ]  # fmt: skip
    for corr, (tid, ts) in enumerate([(1, 15_000), (2, 2_000), (2, 3_000)], 1):
        events += [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": tid, "ts": ts,
             "dur": 50, "args": mm},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": tid,
             "ts": ts + 10, "dur": 5, "args": {"correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7,
             "ts": ts + 60, "dur": 500, "args": {"correlation": corr}},
        ]  # fmt: skip
    path = tmp_path / "t.json"
    doc = {"deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB"}], "traceEvents": events}
    path.write_text(json.dumps(doc))
    (row,) = roofline(load_trace(path)).rows
    assert row.calls == 3
    call = 2 * 4096**3
    done = run("summary", "--roofline", "--format", "json", str(path))
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)["steps"]
    assert [(s["name"], s["flops"]) for s in steps] == [
        ("ProfilerStep#1", 2 * call),
        ("ProfilerStep#2", call),
    ]
