"""The roofline's columns of the op and kernel tables: per op name and per kernel name, over the
whole trace and over a step, on a hand-made trace with known FLOPs and kernel times, and on the
shared traces against the by-shape rows they are summed from."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_model
from tests.tui.helpers import run
from tui.model.analysis.op_work import kernel_work, op_work
from tui.model.analysis.roofline import roofline
from tui.model.analysis.scope import Scope
from tui.model.ingest import load_trace
from tui.model.present.tables import scope_report

BF16 = "c10::BFloat16"
N = 1024
MM_FLOPS = 2 * N**3
CPU = {"pid": 1, "tid": 1}


def _call(name, ts, dims, types, kernels, corr):
    """A CPU op at `ts` (us) launching `kernels` [(name, dur us)], one launch each."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": name, **CPU, "ts": ts, "dur": 100,
         "args": {"Input Dims": dims, "Input type": types, "Concrete Inputs": [""] * len(dims)}},
    ]  # fmt: skip
    at = ts + 1000
    for k, (kernel, dur) in enumerate(kernels):
        c = corr * 10 + k
        events.append(
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", **CPU,
             "ts": ts + 10 + 10 * k, "dur": 5, "args": {"correlation": c}}
        )  # fmt: skip
        events.append(
            {"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": at,
             "dur": dur, "args": {"correlation": c}}
        )  # fmt: skip
        at += dur
    return events


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    mm = ([[N, N], [N, N]], [BF16, BF16])
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", **CPU, "ts": 0,
         "dur": 9000},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", **CPU, "ts": 10000,
         "dur": 9000},
    ]  # fmt: skip
    events += _call("aten::mm", 100, *mm, [("gemm_a", 100)], 1)
    # The same GEMM as two kernels: the op has its FLOPs, neither kernel does.
    events += _call("aten::mm", 10100, *mm, [("gemm_a", 80), ("splitk_reduce", 20)], 2)
    bias = ([[64], [64, 32], [32, 64], [], []], ["float"] * 3 + ["Scalar"] * 2)
    events += _call("aten::addmm", 12000, *bias, [("gemm_small", 10)], 3)
    path = tmp_path_factory.mktemp("work") / "t.json"
    doc = {"deviceProperties": [{"name": "NVIDIA H100 80GB HBM3"}], "traceEvents": events}
    path.write_text(json.dumps(doc))
    return load_trace(path)


def test_an_op_row_sums_its_calls_and_a_kernel_row_only_whole_calls(trace):
    r = roofline(trace)
    ops = op_work(trace, r)
    mm = ops["aten::mm"]
    assert (mm.flops, mm.gpu_ns) == (2 * MM_FLOPS, 200_000)
    assert mm.tflops == pytest.approx(2 * MM_FLOPS / 200e3 / 1e3)
    # 341 FLOP/B: on the compute side of the H100's roof, so % of roof = TFLOP/s over bf16 peak.
    assert mm.bound == "compute"
    assert mm.percent_of_roof == pytest.approx(100 * mm.tflops / 989.4)
    addmm = ops["aten::addmm"]
    assert addmm.flops == 2 * 64 * 64 * 32 + 64 * 64 and addmm.bound == "memory"
    kernels = kernel_work(trace, r)
    assert set(kernels) == {"gemm_a", "gemm_small"}  # splitk_reduce ran half a call
    assert (kernels["gemm_a"].flops, kernels["gemm_a"].gpu_ns) == (MM_FLOPS, 100_000)
    assert kernels["gemm_small"].flops == addmm.flops


def test_over_a_step_only_its_calls_count(trace):
    r = roofline(trace)
    first = Scope(0, 10_000_000)
    assert op_work(trace, r, first)["aten::mm"].flops == MM_FLOPS
    assert "aten::addmm" not in op_work(trace, r, first)
    second = kernel_work(trace, r, Scope(10_000_000, 20_000_000))
    assert set(second) == {"gemm_small"}


def test_the_tables_show_the_columns_only_with_a_roofline(trace):
    plain = scope_report(trace)
    assert "GFLOPs" not in [c.header for c in plain.columns]
    report = scope_report(trace, roof=roofline(trace), sort="tflops")
    headers = [c.header for c in report.columns]
    assert headers[-3:] == ["GFLOPs", "TFLOP/s", "% of roof"]
    assert [r.name for r in report.rows][:2] == ["aten::mm", "aten::addmm"]  # fastest first
    cells = {r.name: [c.text(r, report.totals) for c in report.columns][-3:] for r in report.rows}
    assert cells["aten::mm"] == ["4.29", "21.47", "2.2% compute"]
    assert cells["ProfilerStep*"] == ["-", "-", "-"]


def test_summary_json_rows_carry_the_columns(trace):
    out = run("summary", trace.path, "--format", "json", "--kernels", "--sort", "gflops")
    assert out.returncode == 0, out.stderr
    rows = {row["name"]: row for row in json.loads(out.stdout)["rows"]}
    assert rows["gemm_a"]["flops"] == MM_FLOPS and rows["gemm_a"]["bound"] == "compute"
    assert rows["splitk_reduce"]["flops"] is None and rows["splitk_reduce"]["tflops"] is None


@pytest.mark.parametrize("name", ["h100_bert_small.json.gz", "h100_qwen1.5_0.5b_chat.json.gz"])
def test_op_rows_sum_the_by_shape_rows_on_real_traces(shared, name):
    trace = shared_model(shared / "tracelens" / name)
    r = roofline(trace)
    ops = op_work(trace, r)
    by_name: dict[str, list[int]] = {}
    for row in r.rows:
        t = by_name.setdefault(row.name, [0, 0])
        t[0] += row.flops
        t[1] += row.gpu_ns
    assert {k: [w.flops, w.gpu_ns] for k, w in ops.items()} == by_name
    # A kernel gets at most the FLOPs of the calls it ran for.
    kernels = sum(w.flops for w in kernel_work(trace, r).values())
    assert 0 < kernels <= sum(flops for flops, _ in by_name.values())


def test_memsets_unrun_calls_and_host_copies(tmp_path):
    """A GEMM whose call also cleared a workspace keeps its FLOPs on its kernel; a call that
    launched nothing (captured into a graph) is left out of the rates; a copy from the host is
    not judged against HBM; an unnamed MI300X is known by its CUs and memory."""
    mm = ([[N, N], [N, N]], [BF16, BF16])
    events = _call("aten::mm", 0, *mm, [("gemm_a", 100), ("Memset (Device)", 2)], 1)
    events[-1]["cat"] = "gpu_memset"
    events += _call("aten::mm", 5000, *mm, [], 2)  # captured: no kernel ran
    events += _call("aten::copy_", 9000, [[N], [N], []], [BF16, BF16, "Scalar"],
                    [("Memcpy HtoD (Pinned -> Device)", 50)], 3)  # fmt: skip
    events[-1]["cat"] = "gpu_memcpy"
    device = {"name": "", "computeMajor": 9, "computeMinor": 4, "warpSize": 64, "numSms": 304,
              "totalGlobalMem": 206141652992}  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"deviceProperties": [device], "traceEvents": events}))
    trace = load_trace(path)
    r = roofline(trace)
    assert r.peaks is not None and r.peaks.device == "MI300X"
    assert [row.name for row in r.rows] == ["aten::mm"]  # no copy_ row
    from tui.model.present.details import slice_details

    copy = next(k for k in range(len(trace.slices)) if trace.slice_name(k) == "aten::copy_")
    assert "work" not in dict(slice_details(trace, copy))  # nor an HBM judgement in details
    (row,) = r.rows
    assert (row.calls, row.gpu_ns) == (2, 102_000)
    assert kernel_work(trace, r)["gemm_a"].flops == MM_FLOPS
    # The rates count the call that ran: one GEMM's FLOPs over its kernels' time.
    (kind,) = r.by_kind()
    assert kind.flops == MM_FLOPS and r.utilisation("all", 0, 10**9).flops == MM_FLOPS
    done = run("summary", str(path), "--roofline")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"Modelled ops: {MM_FLOPS / 1e9:,.1f} GFLOPs in 102 us" in out
    assert "1 modelled call ran no kernels" in out
