"""torch.compile on a hand-made trace with known answers: a compiled region holding Inductor's
wrapper call and two Triton launches, eager work beside it; the summary's line, its JSON, a
region's details, and the kernel table's Triton config; then the shared MI300 compile trace."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_model
from tests.tui.helpers import run
from tui.model.analysis.compiled import compiled, under_region
from tui.model.analysis.summary import summarize
from tui.model.ingest import load_trace
from tui.model.present.details import slice_details
from tui.model.present.tables import scope_report

US = 1000
CPU = {"pid": 1, "tid": 1}
GPU = {"pid": 0, "tid": 7}
CONFIG = {"kernel_backend": "triton", "num_warps": 4, "num_stages": 2,
          "kernel_kwargs": "XBLOCK=1024", "kernel_file": "/tmp/torchinductor/x.py",
          "kernel_hash": "abc123"}  # fmt: skip


def _launch(name, ts, corr, dur, launcher=None):
    out = []
    if launcher is not None:
        out.append({"ph": "X", "cat": "cpu_op", "name": launcher, **CPU, "ts": ts - 1,
                    "dur": 10, "args": CONFIG})  # fmt: skip
    out.append({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", **CPU, "ts": ts,
                "dur": 5, "args": {"correlation": corr}})  # fmt: skip
    out.append({"ph": "X", "cat": "kernel", "name": name, **GPU, "ts": ts + 100, "dur": dur,
                "args": {"correlation": corr}})  # fmt: skip
    return out


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", **CPU, "ts": 0,
         "dur": 2000},
        {"ph": "X", "cat": "cpu_op", "name": "Torch-Compiled Region: 0/0", **CPU, "ts": 10,
         "dur": 500},
        {"ph": "X", "cat": "user_annotation", "name": "## Call CompiledFxGraph f00 ##", **CPU,
         "ts": 20, "dur": 400},
        {"ph": "X", "cat": "cpu_op", "name": "aten::eager", **CPU, "ts": 600, "dur": 50},
    ]  # fmt: skip
    events += _launch("triton_poi_fused_add_0", 31, 1, 30, launcher="triton_poi_fused_add_0")
    events += _launch("triton_red_fused_sum_1", 61, 2, 50, launcher="triton_red_fused_sum_1")
    events += _launch("eager_kernel", 610, 3, 20)
    path = tmp_path_factory.mktemp("compiled") / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return load_trace(path)


def test_regions_count_the_kernels_launched_under_them(trace):
    found = compiled(trace)
    assert (found.kernels, found.gpu_ns) == (2, 80 * US)
    assert found.share == pytest.approx(80 / 100)
    by_name = {r.name: r for r in found.regions}
    assert set(by_name) == {"Torch-Compiled Region: 0/0", "## Call CompiledFxGraph f00 ##"}
    assert all((r.calls, r.kernels, r.gpu_ns) == (1, 2, 80 * US) for r in by_name.values())
    assert summarize(trace).compiled == found


def test_the_summary_the_details_and_the_kernel_table_say_it(trace):
    text = run("summary", trace.path, "--top", "1").stdout
    line = next(x for x in text.splitlines() if x.startswith("torch.compile"))
    assert "80% of the GPU work (2 kernels, 80 us) launched in compiled regions" in line
    doc = json.loads(run("summary", trace.path, "--format", "json").stdout)
    assert doc["compiled"]["kernels"] == 2 and len(doc["compiled"]["regions"]) == 2
    region = next(r for r in range(len(trace.slices)) if trace.slice_name(r).startswith("Torch"))
    assert under_region(trace, region) == (2, 80 * US, pytest.approx(0.8), "ProfilerStep#1")
    details = dict(slice_details(trace, region))
    assert details["compiled region"] == (
        "2 kernels launched under it, 80 us of GPU work, 80% of ProfilerStep#1's"
    )
    kernels = scope_report(trace, kernels=True)
    headers = [c.header for c in kernels.columns]
    assert {"Warps", "Stages", "Triton config"} <= set(headers)
    triton = next(r for r in kernels.rows if r.name == "triton_poi_fused_add_0")
    assert (triton.geometry["warps"], triton.geometry["config"]) == ("4", "XBLOCK=1024")
    eager = next(r for r in kernels.rows if r.name == "eager_kernel")
    assert "warps" not in eager.geometry
    launcher = next(r for r in range(len(trace.slices)) if trace.slice_name(r) ==
                    "triton_poi_fused_add_0" and trace.lane_of(r).kind == "cpu")  # fmt: skip
    assert dict(slice_details(trace, launcher))["  kernel_hash"] == "abc123"


def test_the_autograd_wrapper_of_a_compiled_backward_is_no_region():
    from tui.model.patterns import COMPILED_REGION as REGION

    assert REGION.match("CompiledFunctionBackward") and REGION.match("CompiledFunction")
    assert not REGION.match("autograd::engine::evaluate_function: CompiledFunctionBackward")


def test_a_trace_without_regions_has_no_line(shared):
    plain = summarize(shared_model(shared / "tracelens" / "h100_bert_small.json.gz"))
    assert plain.compiled is None


def test_the_shared_compile_trace_runs_all_its_kernels_compiled(shared):
    trace = shared_model(shared / "tracelens" / "mi300_torch_compile_triton.json.gz")
    found = compiled(trace)
    assert found.kernels == 12 and found.share == pytest.approx(1.0)
