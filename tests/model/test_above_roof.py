"""A measured rate above the roof is a wrong assumption, never a result: such a row shows no
percentage and says which assumption failed, in the roofline, the op table and the details."""

from __future__ import annotations

import json

import pytest

from tests.tui.helpers import run
from tui.model.analysis.roofline import roofline
from tui.model.ingest import load_trace
from tui.model.present.details import slice_details

N = 1 << 24  # elements of the elementwise ops' tensors: 64 MiB each in fp32


def write_calls(tmp_path, calls, device="NVIDIA A100-SXM4-80GB", dtype="float"):
    """One op a call on `device` (an A100 80GB: fp32 19.5 TFLOP/s, HBM 2.04 TB/s): (op, Input
    Dims, kernel, us) each, every operand of `dtype`."""
    cpu, events = {"pid": 1, "tid": 1}, []
    for k, (op, dims, kernel, dur) in enumerate(calls):
        ts, corr = 10_000 * k, k + 1
        shapes = {"Input Dims": dims, "Input type": [dtype] * len(dims), "Concrete Inputs": []}
        events += [
            {"ph": "X", "cat": "cpu_op", "name": op, **cpu, "ts": ts, "dur": 50, "args": shapes},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", **cpu, "ts": ts + 10,
             "dur": 5, "args": {"correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": ts + 60,
             "dur": dur, "args": {"correlation": corr}},
        ]  # fmt: skip
    path = tmp_path / "t.json"
    devices = [{"name": device}]
    path.write_text(json.dumps({"deviceProperties": devices, "traceEvents": events}))
    return path


MM = ("aten::mm", [[4096, 4096], [4096, 4096]], "ampere_sgemm_128x64_nn")  # CUDA cores: fp32
ADD = ("aten::add_", [[N], [N]], "vectorized_elementwise_kernel")  # 3 x 64 MiB moved


def _json(*argv):
    done = run(*argv, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_gemm_faster_than_the_fp32_peak_says_the_precision_assumption_failed(tmp_path):
    path = write_calls(tmp_path, [(*MM, 1000)])  # 137 TFLOP/s: 7x the fp32 peak
    r = roofline(load_trace(path))
    (row,) = r.rows
    assert r.percent_of_peak(row) is None and r.above_roof(row) == "fp32 peak"
    text = run("summary", str(path), "--roofline").stdout
    mm_line = next(ln for ln in text.splitlines() if ln.startswith("aten::mm"))
    assert mm_line.rstrip().endswith("> fp32 peak") and "%" not in mm_line
    assert (
        "1 row (1 ms of kernels) ran faster than the precision's peak allows: the math ran in"
        " another precision (TF32, fp8, sparsity) or the model counts FLOPs that did not run;"
        " no % of roof is shown for them (> fp32 peak)"
    ) in text
    doc = _json("summary", str(path), "--roofline")
    (shown,) = doc["rows"]
    assert (shown["percent_of_roof"], shown["above_roof"], shown["bound"]) == (
        None,
        "fp32 peak",
        "compute",
    )
    assert [(a["assumption"], a["rows"], a["gpu_ns"]) for a in doc["above_roof"]] == [
        ("fp32 peak", 1, 1_000_000)
    ]
    assert doc["by_kind"][0]["percent_of_roof"] is None


def test_an_add_faster_than_hbm_allows_shows_no_percentage_anywhere(tmp_path):
    # 201 MB in 20 us is 10 TB/s, five times the HBM's; the mm runs at 13.7 of 19.5 TFLOP/s.
    path = write_calls(tmp_path, [(*ADD, 20), (*MM, 10_000)])
    trace = load_trace(path)
    r = roofline(trace)
    add = next(row for row in r.rows if row.name == "aten::add_")
    assert r.above_roof(add) == "HBM bandwidth"
    text = run("summary", str(path), "--roofline").stdout
    assert "> HBM bandwidth" in text
    assert "ran faster than HBM bandwidth allows: the bytes did not all cross HBM" in text
    # The op table: no percentage for the add, the mm's as before.
    doc = _json("summary", str(path))
    rows = {row["name"]: row for row in doc["rows"]}
    assert (rows["aten::add_"]["percent_of_roof"], rows["aten::add_"]["above_roof"]) == (None, True)
    assert rows["aten::mm"]["percent_of_roof"] == pytest.approx(100 * 13.744 / 19.5, rel=1e-3)
    assert rows["aten::mm"]["above_roof"] is False
    table = run("summary", str(path)).stdout
    add_line = next(ln for ln in table.splitlines() if ln.startswith("aten::add_"))
    assert add_line.rstrip().endswith("> roof")
    # The summary's line names only kinds with a percentage: the GEMM's.
    roof_line = next(ln for ln in table.splitlines() if ln.startswith("Roofline"))
    assert "GEMM at 70.5% of its roof" in roof_line and "elementwise at" not in roof_line
    # The details of the call say why, and give no percentage.
    row = int(next(i for i in range(len(trace.slices)) if trace.slice_name(i) == "aten::add_"))
    work = dict(slice_details(trace, row)).get("work", "")
    assert "faster than HBM bandwidth allows" in work and "% of the" not in work


def test_a_row_within_its_roof_keeps_its_percentage_beside_one_above(tmp_path):
    # Two add_ shapes: the big one at 1.0 TB/s (half the HBM's), a half-size one at 20 TB/s.
    half = ("aten::add_", [[N // 2], [N // 2]], "vectorized_elementwise_kernel")
    path = write_calls(tmp_path, [(*ADD, 201), (*half, 5)])
    r = roofline(load_trace(path))
    shares = {row.dims: (r.percent_of_peak(row), r.above_roof(row)) for row in r.rows}
    big, small = shares[json.dumps([[N], [N]])], shares[json.dumps([[N // 2], [N // 2]])]
    assert big[0] is not None and big[0][0] == pytest.approx(100 * 3 * 4 * N / 201e3 / 2039)
    assert big[1] is None and small == (None, "HBM bandwidth")
    (kind,) = r.by_kind()
    assert kind.percent_of_roof == pytest.approx(big[0][0])  # the row above is left out
