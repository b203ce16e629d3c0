"""The backend's traces: every workload on the CPU, checked through the viewer's own model."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import asdict

import pytest

from profiling.registry import WORKLOADS
from tests.profiling.reference import differences
from tui.model.analysis.ops import op_stats
from tui.model.ingest import load_trace

TINY = {"matmul": 16, "linear": 16, "mlp": 16, "transformer": 32}
EXPECTED_OPS = {
    "matmul": {"aten::mm", "aten::add"},
    "linear": {"aten::addmm"},
    "mlp": {"aten::addmm", "aten::gelu"},
    "transformer": {"aten::addmm", "aten::add", "aten::cat"},
}


@pytest.fixture(
    scope="module",
    params=[(name, stack) for name in sorted(WORKLOADS) for stack in (False, True)],
    ids=lambda p: f"{p[0]}{'-with_stack' if p[1] else ''}",
)
def run(request, tmp_path_factory, export):
    """Each workload as `trace-profile` runs it, plain and with with_stack + record_shapes."""
    name, stack = request.param
    out = tmp_path_factory.mktemp(name) / f"{name}.pt.trace.json.gz"
    result = export.profile_workload(
        name, out, device="cpu", steps=2, size=TINY[name], with_stack=stack, record_shapes=stack
    )
    return name, result, load_trace(result.path)


def _names(trace):
    return [trace.slice_name(r) for r in range(len(trace.slices))]


def test_trace_has_the_label_once_per_active_step(run):
    name, result, trace = run
    names = _names(trace)
    assert result.path.name.endswith(".json.gz") and trace.format.gzip
    assert names.count(name) == 2
    steps = sorted(n for n in names if re.fullmatch(r"ProfilerStep#\d+", n))
    assert len(steps) == 2
    assert EXPECTED_OPS[name] <= set(names)


def test_viewer_stats_agree_with_key_averages(run):
    """Every row (tests/profiling/reference.py); with no GPU in these runs, both sides say so."""
    _, result, trace = run
    assert differences(trace, [asdict(op) for op in result.ops]) == []
    assert not any(op.self_cuda_ns for op in op_stats(trace))
    assert not any(op.self_device_us for op in result.ops)


def test_the_table_is_sorted_by_cpu_time_on_the_cpu(run):
    _, result, _ = run
    assert "CPU total" in result.table and "Self CPU time total" in result.table


def test_unknown_workloads_and_bad_paths_fail_cleanly(tmp_path, export):
    with pytest.raises(export.ProfilingError, match="unknown workload"):
        export.profile_workload("nope", tmp_path / "t.json", device="cpu")
    with pytest.raises(export.ProfilingError, match="does not exist"):
        export.profile_workload("matmul", tmp_path / "missing" / "t.json", device="cpu", size=8)


def test_a_failed_run_leaves_nothing_at_the_output(tmp_path, monkeypatch, torch, export):
    def broken_export(self, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch.profiler.profile, "export_chrome_trace", broken_export)
    with pytest.raises(OSError):
        export.profile_workload("matmul", tmp_path / "t.json", device="cpu", size=8)
    assert list(tmp_path.iterdir()) == []


def test_asking_for_cuda_without_it_is_refused(tmp_path, torch, export):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(export.ProfilingError, match="no CUDA device"):
        export.profile_workload("matmul", tmp_path / "t.json", device="cuda", size=8)


@pytest.mark.cuda
def test_cuda_trace_has_kernels_linked_to_launches(tmp_path, torch, export):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    result = export.profile_workload("matmul", tmp_path / "t.json", device="cuda", size=256)
    trace = load_trace(result.path)
    assert any(lane.kind == "gpu" for lane in trace.lanes)
    assert len(trace.launches) >= 2


@pytest.mark.cuda
@pytest.mark.parametrize("stack", [False, True], ids=["plain", "with_stack"])
@pytest.mark.parametrize("name", ["mlp", "transformer"])
def test_on_cuda_the_op_and_kernel_tables_match_key_averages(tmp_path, torch, name, stack):
    """Self CUDA and CUDA total by torch's rule (the op whose External id the kernel carries),
    with and without Python frames in the tree. Each run is `trace-profile --key-averages` in a
    process of its own, as a user makes one: several profiler sessions in one process once
    gave a sync call a stray 0.86 us of device time in torch's table (torch 2.11, an H200)."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    out = tmp_path / "t.pt.trace.json.gz"
    args = [name, "--device", "cuda", "--steps", "2", "--key-averages", "--out", str(out)]
    args += ["--with-stack", "--record-shapes"] if stack else []
    done = subprocess.run(
        [sys.executable, "-m", "profiling", *args], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "t.pt.trace.key_averages.json").read_text())["ops"]
    trace = load_trace(out)
    assert differences(trace, rows) == []
    assert sum(op.self_cuda_ns for op in op_stats(trace)) > 0


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_memory_columns_agree_with_key_averages_exactly(tmp_path, name, export):
    from tui.model.analysis.memory import peaks

    result = export.profile_workload(
        name, tmp_path / "m.json", device="cpu", steps=1, size=TINY[name], profile_memory=True
    )
    trace = load_trace(result.path)
    assert len(trace.memory) > 0
    ours = {op.name: op for op in op_stats(trace)}
    for op in result.ops:
        mine = ours[op.name]
        assert (mine.cpu_mem, mine.self_cpu_mem) == (op.cpu_mem, op.self_cpu_mem), op.name
    events = json.loads(result.path.read_text())["traceEvents"]
    most = max(e["args"]["Total Allocated"] for e in events if e.get("name") == "[memory]")
    (cpu,) = [p for p in peaks(trace) if p.device == "cpu"]
    assert cpu.allocated == most
