"""The backend's own CUDA traces (sample_traces/, made on an H200 by `trace-profile
--key-averages`): every op, kernel and GPU annotation against the key_averages() rows torch
printed for the same run, and what the viewer says of the matmul pair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.profiling.reference import differences
from tests.tui.helpers import run
from tui.model.ingest import load_trace

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
REFERENCES = sorted(SAMPLES.glob("*_cuda*.key_averages.json"))


def test_the_cuda_samples_are_here():
    assert len(REFERENCES) >= 7  # matmul 64 and 4096, linear, mlp and transformer, two with stacks


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda p: p.name.split(".")[0])
def test_each_cuda_sample_matches_its_runs_key_averages(reference):
    doc = json.loads(reference.read_text())
    assert doc["device_name"] and doc["cuda"]  # made on a GPU, and says which
    trace = load_trace(SAMPLES / doc["trace"])
    assert any(lane.kind == "gpu" for lane in trace.lanes)
    assert differences(trace, doc["ops"]) == []


def _summary(name: str, *flags: str) -> dict:
    done = run("summary", "--format", "json", *flags, str(SAMPLES / name))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_pair_is_overhead_bound_at_64_and_compute_bound_at_4096():
    small = _summary("matmul_64_cuda.pt.trace.json.gz")
    large = _summary("matmul_4096_cuda.pt.trace.json.gz")
    assert small["verdict"]["label"] == "overhead-bound"
    assert large["verdict"]["label"].startswith("compute-bound")


def test_an_fp32_xmma_gemm_ran_on_cuda_cores_and_tf32_is_advised():
    """cuBLAS named its fp32 4096x4096 GEMM `sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma_...`:
    fp32 math on CUDA cores (51 TFLOP/s, 77% of the H200's 67 TFLOP/s fp32 peak; TF32 would
    allow 494), not TF32 because the name says xmma."""
    kernels = _summary("matmul_4096_cuda.pt.trace.json.gz", "--kernels")["rows"]
    gemm = kernels[0]
    assert "xmma" in gemm["name"] and "_f32f32_f32f32_f32_" in gemm["name"]
    assert gemm["tensor_cores"] is False
    assert 70 < gemm["percent_of_roof"] < 85  # against the fp32 peak, not TF32's (10%)
    steps = _summary("matmul_4096_cuda.pt.trace.json.gz")["next_steps"]
    assert [s["rule"] for s in steps] == ["tensor-cores"]
    # No convolutions: cuDNN's TF32 switch (on by default) is not the advice.
    assert (
        "set_float32_matmul_precision" in steps[0]["change"] and "cudnn" not in steps[0]["change"]
    )


def test_the_comparison_catches_a_kernel_on_the_wrong_op_and_one_torch_does_not_count():
    doc = json.loads((SAMPLES / "transformer_128_cuda.pt.trace.key_averages.json").read_text())
    trace = load_trace(SAMPLES / doc["trace"])
    rows = doc["ops"]
    moved = [dict(r) for r in rows]
    mm = next(r for r in moved if r["name"] == "aten::addmm")
    mm["self_device_us"] -= 0.68  # the length of the run's shortest kernel, charged elsewhere
    assert [line.split(": ")[0] for line in differences(trace, moved)] == ["aten::addmm"]
    kernel = next(r for r in rows if r["cpu_total_us"] == 0 and r["name"].startswith("void"))
    fewer = [r for r in rows if r is not kernel]
    assert differences(trace, fewer) == [f"{kernel['name']}: in our kernel table, not in torch's"]


def _union(spans: list[tuple[float, float]]) -> list[list[float]]:
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def test_the_decode_steps_launch_bound_equals_a_stdlib_count():
    """The GPU's idle time in the steps under the recorded work of the launching thread (no
    ProfilerStep span, no Python frame), less the part the sync calls wait through (the
    sync rule's), counted from the JSON with the stdlib alone."""
    import gzip

    path = SAMPLES / "transformer_128_cuda.pt.trace.json.gz"
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X"]
    steps = [e for e in spans if e["name"].startswith("ProfilerStep#")]
    w0, w1 = min(e["ts"] for e in steps), max(e["ts"] + e["dur"] for e in steps)
    gpu = _union([(e["ts"], e["ts"] + e["dur"]) for e in spans if e.get("cat") == "kernel"])
    idle, t = [], w0
    for a, b in gpu:
        if a > t:
            idle.append([t, min(a, w1)])
        t = max(t, b)
    idle.append([t, w1])
    threads = {(e["pid"], e["tid"]) for e in spans if e["name"] == "cudaLaunchKernel"}
    work = _union(
        [
            (e["ts"], e["ts"] + e["dur"])
            for e in spans
            if (e["pid"], e["tid"]) in threads
            and not e["name"].startswith("ProfilerStep#")
            and e.get("cat") != "python_function"
        ]
    )

    def idle_under(cover: list[list[float]]) -> float:  # both disjoint: each overlap once
        return sum(max(0.0, min(b, d) - max(a, c)) for a, b in idle for c, d in cover)

    syncs = _union([(e["ts"], e["ts"] + e["dur"]) for e in spans if "Synchronize" in e["name"]])
    expected_us = idle_under(work) - idle_under(syncs)
    assert 0 < idle_under(syncs) < 100  # three syncs of ~12 us: the rest is launch overhead
    (launch,) = [s for s in _summary(path.name)["next_steps"] if s["rule"] == "launch-overhead"]
    assert launch["bound_ns"] == pytest.approx(expected_us * 1e3, abs=len(idle))  # 1 ns a gap
