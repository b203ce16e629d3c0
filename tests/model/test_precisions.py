"""Peaks by the precision that ran: fp8 and int8 GEMMs are judged against their own peaks, and
the MFU weighs each op by the peak of its precision."""

from __future__ import annotations

import pytest

from tests.model.test_above_roof import write_calls
from tui.model.analysis.roofline import roofline
from tui.model.ingest import load_trace

M = 8192  # [M, M] x [M, M]: 2 M^3 = 1.1 TFLOP a call


@pytest.mark.parametrize(
    ("op", "dtype", "device", "peak", "cls"),
    [
        ("aten::_scaled_mm", "c10::Float8_e4m3fn", "NVIDIA H100 80GB HBM3", 1978.9, "fp8"),
        ("aten::_int_mm", "signed char", "NVIDIA A100-SXM4-80GB", 624.0, "int8"),
        ("aten::_int_mm", "signed char", "AMD Instinct MI300X", 2614.9, "int8"),
        ("aten::mm", "c10::BFloat16", "NVIDIA H100 80GB HBM3", 989.4, "bf16"),
    ],
)
def test_a_gemm_is_judged_against_the_peak_of_its_precision(tmp_path, op, dtype, device, peak, cls):
    path = write_calls(tmp_path, [(op, [[M, M], [M, M]], "gemm_kernel", 5000)], device, dtype)
    trace = load_trace(path)
    r = roofline(trace)
    (row,) = r.rows
    rate = 2 * M**3 / 5e-3 / 1e12  # 219.9 TFLOP/s (TOPS for int8)
    assert row.tflops == pytest.approx(rate)
    share, side = r.percent_of_peak(row)
    assert side == "compute" and share == pytest.approx(100 * rate / peak)
    assert r.peak_classes() == cls
    window = r.utilisation("all", 0, trace.span_ns)
    assert window.mfu == pytest.approx(2 * M**3 / (peak * 1e3) / trace.span_ns)


def test_an_int8_gemm_moves_int8_operands_and_an_int32_output(tmp_path):
    path = write_calls(
        tmp_path, [("aten::_int_mm", [[M, 64], [64, M]], "k", 10)], dtype="signed char"
    )
    (row,) = roofline(load_trace(path)).rows
    assert (row.work.flops, row.work.bytes) == (2 * M * M * 64, 2 * M * 64 + 4 * M * M)
