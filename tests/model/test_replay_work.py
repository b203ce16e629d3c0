"""Graph-replayed kernels take the FLOPs and bytes of the ops that launched them while the graph
was captured: from the same file, or from a capture trace the user names; against TraceLens's
own sheets on the shared vLLM and SGLang capture/replay pairs."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_model
from tests.model.test_roofline import _theirs
from tests.tui.helpers import run
from tui.model.analysis.replay_work import with_replays
from tui.model.analysis.roofline import roofline
from tui.model.ingest import load_trace

US = 1000
CPU = {"pid": 1, "tid": 1}
MM = {"Input Dims": [[64, 128], [128, 256]], "Input type": ["c10::BFloat16"] * 2}


def _x(name, cat, ts, dur, where=CPU, **args):
    return {"ph": "X", "name": name, "cat": cat, **where, "ts": ts, "dur": dur, "args": args}


def _capture(t0=0):
    """A capture region holding aten::mm (one gemm launch) then aten::relu (one launch)."""
    return [
        _x("cudaStreamBeginCapture", "cuda_runtime", t0, 1),
        _x("aten::mm", "cpu_op", t0 + 2, 10, **MM, **{"Concrete Inputs": ["", ""]}),
        _x("cudaLaunchKernel", "cuda_runtime", t0 + 3, 2, correlation=900 + t0),
        _x("aten::relu", "cpu_op", t0 + 13, 5, **{"Input Dims": [[64, 256]]},
           **{"Input type": ["c10::BFloat16"], "Concrete Inputs": [""]}),
        _x("cudaLaunchKernel", "cuda_runtime", t0 + 14, 2, correlation=901 + t0),
        _x("cudaStreamEndCapture", "cuda_runtime", t0 + 20, 1),
    ]  # fmt: skip


def _replays(t0, n=2, gemm_us=(4, 6)):
    """`n` replays of the captured graph: one launch each, a gemm then a relu kernel."""
    events = []
    for k in range(n):
        t, corr = t0 + 100 * k, 10 + k
        events.append(_x("cudaGraphLaunch", "cuda_runtime", t, 3, correlation=corr))
        gpu = {"pid": 0, "tid": 7}
        events.append(_x("gemm_kernel", "kernel", t + 5, gemm_us[k], gpu, correlation=corr))
        events.append(_x("relu_kernel", "kernel", t + 20, 2, gpu, correlation=corr))
    return events


def _write(path, events):
    devices = [{"name": "NVIDIA H100 80GB HBM3"}]
    path.write_text(json.dumps({"deviceProperties": devices, "traceEvents": events}))
    return path


def test_replays_take_the_work_of_the_ops_captured_in_the_same_file(tmp_path):
    trace = load_trace(_write(tmp_path / "t.json", _capture() + _replays(1000)))
    r = with_replays(roofline(trace), trace, None)
    rows = {row.name: row for row in r.rows}
    mm = rows["aten::mm"]
    assert (mm.calls, mm.idle_calls, mm.gpu_ns) == (3, 1, 10 * US)  # the capture's call ran none
    assert mm.work.flops == 2 * 64 * 128 * 256
    assert (mm.min_ns, mm.max_ns) == (0, 6 * US)
    assert rows["aten::relu"].gpu_ns == 4 * US
    assert r.replays_matched == 2 and r.replays_unmatched_ns == 0
    window = r.utilisation("all", 0, trace.span_ns)
    assert window.flops == 2 * mm.work.flops + 2 * rows["aten::relu"].work.flops


def test_a_capture_trace_named_on_the_command_line(tmp_path):
    capture = _write(tmp_path / "capture.json", _capture())
    replay = _write(tmp_path / "replay.json", _replays(0, n=3, gemm_us=(4, 6, 8)))
    alone = run("summary", str(replay), "--roofline").stdout
    assert "of the GPU time ran in graph replays no capture matches, unmodelled" in alone
    doc = json.loads(
        run(
            "summary", str(replay), "--roofline", "--capture", str(capture), "--format", "json"
        ).stdout
    )
    mm = next(row for row in doc["rows"] if row["name"] == "aten::mm")
    assert (mm["calls"], mm["gpu_ns"], mm["flops_per_call"]) == (3, 18 * US, 2 * 64 * 128 * 256)
    line = run("summary", str(replay), "--capture", str(capture)).stdout
    assert "3 graph replays counted with the ops of its capture" in line
    # TraceLens's execution_details.json beside the capture names it.
    (tmp_path / "execution_details.json").write_text(json.dumps([{"file": "capture.json"}]))
    via = run("summary", str(replay), "--roofline", "--capture", str(tmp_path), "--format", "json")
    assert json.loads(via.stdout)["rows"] == doc["rows"]
    bad = run("summary", str(replay), "--capture", str(tmp_path / "nothing.json"))
    assert bad.returncode != 0 and "nothing.json" in bad.stderr and "Traceback" not in bad.stderr


def test_two_captures_of_one_size_match_no_replay_rather_than_a_guess(tmp_path):
    # Two batch sizes captured, as many launches each, kernels unnamed: which one ran is unknown.
    events = _capture() + _capture(t0=50) + _replays(1000)
    trace = load_trace(_write(tmp_path / "t.json", events))
    r = with_replays(roofline(trace), trace, None)
    assert r.replays_matched == 0 and r.replays_unmatched_ns == (4 + 6 + 2 * 2) * US


def test_a_replayed_fp32_gemm_on_tensor_cores_is_tf32(tmp_path):
    events = _capture() + _replays(1000)
    for e in events:
        if e["name"] == "aten::mm":
            e["args"]["Input type"] = ["float", "float"]
        if e["name"] == "gemm_kernel":
            e["name"] = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32"
    trace = load_trace(_write(tmp_path / "t.json", events))
    r = with_replays(roofline(trace), trace, None)
    mm = [row for row in r.rows if row.name == "aten::mm"]
    assert {row.work.math for row in mm} == {"", "tf32"}  # the capture's call, the replays'
    assert next(row for row in mm if row.work.math == "tf32").calls == 2


def test_a_capture_of_other_kernels_matches_no_replay(tmp_path):
    events = _capture() + _replays(1000)
    for e in events:
        if e["name"] == "relu_kernel":
            e["name"] = "softmax_kernel"
    for e in events:  # the capture's launches name their kernels, as HIP's do
        if e["name"] == "cudaLaunchKernel":
            e["args"]["kernel"] = "gemm_kernel" if e["ts"] == 3 else "relu_kernel"
    trace = load_trace(_write(tmp_path / "t.json", events))
    r = with_replays(roofline(trace), trace, None)
    assert r.replays_matched == 0 and r.replays_unmatched_ns == 2 * 2 * US + 10 * US


PAIRS = [
    (
        "mi300_vllm_graph_execution_full.json.gz",
        "mi300_vllm_graph_capture_full.pt.trace.json.gz",
        "mi300_vllm_graph_execution_full",
    ),
    (
        "mi300_sglang_qwen3_8b_decode.json.gz",
        "mi300_sglang_qwen3_8b_decode_capture_bs32.json.gz",
        "mi300_sglang_qwen3_8b_decode",
    ),
]


@pytest.mark.parametrize(("replay", "capture", "report"), PAIRS, ids=["vllm", "sglang"])
def test_replayed_gemms_equal_tracelens(shared, replay, capture, report):
    """FLOPs per call within 1% and TFLOP/s within 5% of TraceLens's sheets for the replays'
    GEMMs; FLOPs and bytes of the other ops it has sheets for (RMSNorm, silu_and_mul, rotary
    embedding, copies) within 1% too."""
    trace = shared_model(shared / "tracelens" / replay)
    r = with_replays(roofline(trace), trace, shared_model(shared / "tracelens" / capture))
    assert r.replays_matched >= 1
    ours = {(row.name, row.dims, row.concrete, row.types): row for row in r.rows}
    gemms, names = 0, set()
    for key, t in _theirs(shared, report).items():
        row = ours.get(key)
        if row is None or not t["us"]:
            continue
        assert row.work.flops == pytest.approx(t["flops"], rel=0.01), key
        assert row.work.bytes == pytest.approx(t["bytes"], rel=0.01), key
        names.add(row.name)
        if row.work.kind == "GEMM":
            theirs = t["flops"] * t["calls"] / (t["us"] * 1e3) / 1e3
            assert row.tflops == pytest.approx(theirs, rel=0.05), key
            gemms += 1
    assert gemms >= 3 and len(names) >= 3, names
