"""The recommendations, on hand-made traces whose causes and savings are known."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from tests.conftest import DATA
from tests.model.test_stats_verdict import _trace
from tests.tui.helpers import run
from tui.model.analysis.advice import MIN_SAVING, advise
from tui.model.analysis.kernels import kernel_stats
from tui.model.analysis.summary import summarize
from tui.model.analysis.sync_sites import sync_sites
from tui.model.analysis.tensor_cores import uses_tensor_cores
from tui.model.analysis.verdict_rules import SHORT_KERNELS
from tui.model.ingest import load_trace

US = 1000


def _advise(trace):
    return advise(trace, summarize(trace))


def _rules(path):
    return {r.rule: r for r in _advise(load_trace(path))}


def test_the_dataloader_covering_the_idle_time_is_the_first_step():
    """One step [0, 100) us; the DataLoader covers 70 us of the GPU's 83 us idle."""
    found = _advise(load_trace(DATA / "dataloader_bound.json"))
    assert found[0].rule == "data-loading"
    assert (found[0].bound_ns, found[0].per_step_ns) == (70 * US, 70 * US)
    assert "num_workers" in found[0].change and "70 us" in found[0].evidence


def test_a_sync_covering_the_idle_time_is_bounded_by_that_idle_time():
    rules = _rules(DATA / "sync_bound.json")
    assert rules["syncs"].bound_ns == 65 * US  # the sync [5, 75) over the idle [10, 80)
    assert "data-loading" not in rules


def test_exposed_communication_is_bounded_by_the_exposed_time():
    rules = _rules(DATA / "comm_bound.json")  # an all-reduce [20, 90), compute [0, 30)
    assert rules["communication"].bound_ns == 60 * US
    assert rules["communication"].per_step_ns is None  # the trace has no steps
    assert "launch-overhead" not in rules


def test_launch_overhead_is_bounded_by_the_idle_time_under_the_launching_threads_work(tmp_path):
    """Three steps of four 30 us launches of 2 us kernels, with nothing recorded between them:
    the GPU waits 152 us a step, 120 us of it while the CPU is in a launch call (the rest the
    profiler saw nothing in: not claimed)."""
    trace = _trace(tmp_path, kernels_us=2, launch_us=30, gap_us=10)
    found = _advise(trace)
    assert [r.rule for r in found] == ["launch-overhead"]
    assert (found[0].bound_ns, found[0].per_step_ns) == (360 * US, 120 * US)
    assert "the GPU waited 360 us on the host" in found[0].evidence


def _launch_step(ops: bool) -> list[tuple]:
    """A 170 us step of four 5 us launches of 2 us kernels, 42 us apart, each launch inside a
    40 us aten::linear when `ops`."""
    events: list[tuple] = [("user_annotation", "ProfilerStep#1", 1, 0, 170, {})]
    for corr in range(1, 5):
        t = (corr - 1) * 42
        if ops:
            events.append(("cpu_op", "aten::linear", 1, t, 40, {}))
        events.append(("cuda_runtime", "cudaLaunchKernel", 1, t + 30, 5, {"correlation": corr}))
        events.append(("kernel", "k", 7, t + 36, 2, {"correlation": corr}))
    return events


def test_the_ops_around_the_launches_count_as_the_host_work_a_graph_removes(tmp_path):
    """Four aten::linear calls of 40 us, each launching a 2 us kernel in 5 us of it: a CUDA
    graph replays the step without the ops' dispatch either, so the bound is the idle time under
    the ops (38 us each, but for the kernel's 2 us), not the launch calls' 5 us."""
    events = _launch_step(ops=True)
    trace = _write(tmp_path, events)
    (launch,) = [r for r in _advise(trace) if r.rule == "launch-overhead"]
    assert launch.bound_ns == 4 * (40 - 2) * US


def test_a_run_that_captures_graphs_is_not_told_to_capture_them(tmp_path):
    """A serving engine profiled while it captures its graphs: the GPU idles through the
    capture by design; the same launches without the capture get the advice."""
    events = _launch_step(ops=True)
    assert "launch-overhead" in {r.rule for r in _advise(_write(tmp_path, events))}
    events.append(("cuda_runtime", "cudaStreamBeginCapture", 1, 1, 1, {}))
    assert "launch-overhead" not in {r.rule for r in _advise(_write(tmp_path, events))}


def test_a_python_frame_over_the_whole_step_is_not_host_work_a_graph_removes(tmp_path):
    """with_stack: the outermost Python frame spans the step whatever ran in it (a compile the
    profiler saw nothing of, say); only the four 5 us launch calls count."""
    events = _launch_step(ops=False)
    events.append(("python_function", "train.py(12): <module>", 1, 0, 170, {}))
    (launch,) = [r for r in _advise(_write(tmp_path, events)) if r.rule == "launch-overhead"]
    assert launch.bound_ns == 4 * 5 * US


def test_a_busy_gpu_gets_no_advice(tmp_path):
    assert _advise(_trace(tmp_path, kernels_us=4000, launch_us=10, gap_us=1)) == []
    # nor does a trace without GPU work
    cpu = _trace(tmp_path, kernels_us=0, launch_us=30, gap_us=5, cpu_only=True)
    assert _advise(cpu) == []


def test_a_cause_under_the_threshold_stays_silent(tmp_path):
    """A 1 ms kernel, then twenty 2 us launches of 1 us kernels queued behind it: nearly every
    kernel is shorter than its launch, but the GPU never waits on the host for more than 5% of
    the wall time (MIN_SAVING)."""
    events = [("user_annotation", "ProfilerStep#1", 1, 0, 1030, {})]
    for corr, t in enumerate(range(0, 42, 2), 1):
        kernel = 1000 if corr == 1 else 1
        events.append(("cuda_runtime", "cudaLaunchKernel", 1, t, 2, {"correlation": corr}))
        events.append(
            ("kernel", "k", 7, 2 + 1000 * (corr > 1) + corr, kernel, {"correlation": corr})
        )
    trace = _write(tmp_path, events)
    summary = summarize(trace)
    e = summary.verdict.evidence
    assert e.short_work_share >= SHORT_KERNELS and e.launches_outweigh_work
    assert 0 < e.idle_ns < MIN_SAVING * e.wall_ns
    assert advise(trace, summary) == []


def test_summary_prints_the_next_steps_in_text_markdown_and_json():
    path = str(DATA / "dataloader_bound.json")
    text = run("summary", path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    at = lines.index("Next steps (largest possible saving first)")
    assert lines[at + 1] == "1. The GPU waits for the DataLoader: up to 70 us per step"
    assert "pin_memory=True" in lines[at + 2]
    markdown = run("summary", path, "--format", "markdown").stdout
    steps = markdown.split("### Next steps\n", 1)[1].split("\n| ", 1)[0]
    tokens = MarkdownIt().parse(steps)  # one item: its title, then its evidence
    opens = [t.type for t in tokens if t.type.endswith("_open")]
    assert opens == ["ordered_list_open", "list_item_open", "paragraph_open", "paragraph_open"]
    title, evidence = [t for t in tokens if t.type == "inline"]
    assert title.content == "**The GPU waits for the DataLoader: up to 70 us per step**"
    assert "pin_memory=True" in evidence.content
    doc = json.loads(run("summary", path, "--format", "json").stdout)
    assert [(s["rule"], s["bound_ns"], s["bound_per_step_ns"]) for s in doc["next_steps"]] == [
        ("data-loading", 70 * US, 70 * US)
    ]


def _write(tmp_path, events, devices=()):
    """A trace of `events`: (cat, name, tid, start us, dur us, args) on pid 1 (CPU) or, for the
    kernel category, pid 0 stream 7, with launch flows by the `correlation` arg."""
    out = []
    for cat, name, tid, ts, dur, args in events:
        gpu = cat == "kernel"
        out.append(
            {
                "ph": "X",
                "cat": cat,
                "name": name,
                "pid": 0 if gpu else 1,
                "tid": 7 if gpu else tid,
                "ts": ts,
                "dur": dur,
                "args": args,
            }
        )
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": out, "deviceProperties": list(devices)}))
    return load_trace(path)


def _launched(kernels, step_us):
    """One step [0, step_us) launching each (name, start us, dur us) kernel 1 us before it."""
    events = [("user_annotation", "ProfilerStep#1", 1, 0, step_us, {})]
    for corr, (name, start, dur) in enumerate(kernels, 1):
        events.append(("cuda_runtime", "cudaLaunchKernel", 1, start - 1, 1, {"correlation": corr}))
        events.append(("kernel", name, 7, start, dur, {"correlation": corr}))
    return events


A100 = {"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 40 * 2**30}
SGEMM = "volta_sgemm_128x64_nn"
TENSOR_OP = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>()"
ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>()"


def test_fp32_gemms_on_cuda_cores_are_bounded_by_the_tf32_peak_ratio(tmp_path):
    """600 us of sgemm on an A100 (TF32 156 over fp32 19.5 TFLOP/s: 8x) could take 75 us: up to
    525 us saved. The tensor-core GEMM beside it is not counted."""
    trace = _write(
        tmp_path, _launched([(SGEMM, 10, 600), (TENSOR_OP, 620, 100), (ADD, 730, 5)], 800), [A100]
    )
    found = {r.rule: r for r in _advise(trace)}
    tc = found["tensor-cores"]
    assert tc.bound_ns == 525 * US
    assert "set_float32_matmul_precision" in tc.change and "8x fp32 on A100 40GB" in tc.evidence
    assert tc.target is not None and tc.target.name == SGEMM
    kernels = {k.name: k.tensor_cores for k in kernel_stats(trace)}
    assert kernels == {SGEMM: False, TENSOR_OP: True, ADD: None}
    text = run("summary", str(trace.path), "--kernels").stdout.splitlines()
    header = next(line for line in text if line.startswith("Name"))
    assert " TC " in header
    assert [line.split()[-1] for line in text if line.startswith(("volta", "void cutlass"))] == [
        "no",
        "yes",
    ]


@pytest.mark.parametrize(
    ("kernel", "on_tensor_cores"),
    [
        ("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4", True),  # TF32
        ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", True),
        ("sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x32_stage3", True),
        ("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw", True),
        (
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma",
            False,
        ),
        ("sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nhwckrsc_nhwc_ffma", False),
        ("ampere_sgemm_128x64_nn", False),
        ("void at::native::vectorized_elementwise_kernel<4, float>", None),  # not a GEMM
    ],
)
def test_tensor_cores_are_read_from_the_kernel_name(kernel, on_tensor_cores):
    assert uses_tensor_cores(kernel) is on_tensor_cores


def test_gemms_on_tensor_cores_get_no_tensor_core_advice(tmp_path):
    trace = _write(tmp_path, _launched([(TENSOR_OP, 10, 600), (TENSOR_OP, 620, 100)], 800), [A100])
    assert "tensor-cores" not in {r.rule for r in _advise(trace)}


def test_a_device_without_tf32_is_told_to_autocast_to_fp16(tmp_path):
    v100 = {"id": 0, "name": "Tesla V100-SXM2-16GB", "totalGlobalMem": 16 * 2**30}
    trace = _write(tmp_path, _launched([(SGEMM, 10, 600)], 800), [v100])
    tc = next(r for r in _advise(trace) if r.rule == "tensor-cores")
    assert "float16" in tc.change and tc.bound_ns == round(600 * US * (1 - 15.7 / 125))


def test_a_run_of_elementwise_kernels_could_save_all_but_its_longest(tmp_path):
    """GEMM, then add (10 us), add (20 us), add (30 us), GEMM, a lone add: one run of three
    that a fused kernel makes in one pass (30 us): up to 30 us saved. The lone add is no run."""
    kernels = [(TENSOR_OP, 10, 100), (ADD, 120, 10), (ADD, 140, 20), (ADD, 170, 30)]
    kernels += [(TENSOR_OP, 210, 100), (ADD, 320, 40)]
    trace = _write(tmp_path, _launched(kernels, 400), [A100])
    fusion = next(r for r in _advise(trace) if r.rule == "fusion")
    assert fusion.bound_ns == 30 * US
    assert fusion.evidence.startswith("1 run of 3 elementwise")
    assert fusion.target is not None and fusion.target.start_ns == 120 * US
    assert "torch.compile" in fusion.change


def test_elementwise_kernels_between_gemms_are_not_a_run(tmp_path):
    kernels = [(TENSOR_OP, 10, 100), (ADD, 120, 30), (TENSOR_OP, 160, 100), (ADD, 270, 30)]
    trace = _write(tmp_path, _launched(kernels, 400), [A100])
    assert "fusion" not in {r.rule for r in _advise(trace)}


def test_a_sync_names_the_python_line_outside_torch_that_made_it(tmp_path):
    """train.py(12) calls torch's item() (a torch frame), whose aten::item waits 70 us in
    cudaStreamSynchronize while the GPU idles 65 us of it."""
    events = [
        ("user_annotation", "ProfilerStep#1", 1, 0, 100, {}),
        ("cuda_runtime", "cudaLaunchKernel", 1, 0, 1, {"correlation": 1}),
        ("python_function", "train.py(12): step", 1, 3, 74, {}),
        ("python_function", "torch/_tensor.py(40): item", 1, 4, 72, {}),
        ("cpu_op", "aten::item", 1, 4, 72, {}),
        ("cpu_op", "aten::_local_scalar_dense", 1, 4, 72, {}),
        ("cuda_runtime", "cudaStreamSynchronize", 1, 5, 70, {}),
        ("cuda_runtime", "cudaLaunchKernel", 1, 78, 1, {"correlation": 2}),
        ("kernel", "k1", 7, 2, 8, {"correlation": 1}),
        ("kernel", "k2", 7, 80, 10, {"correlation": 2}),
    ]
    trace = _write(tmp_path, events)
    sync = next(r for r in _advise(trace) if r.rule == "syncs")
    assert sync.bound_ns == 65 * US
    assert "from train.py(12): step: 1 call (1/step), 65 us of GPU idle" in sync.evidence
    assert sync.target is not None and sync.target.name == "cudaStreamSynchronize"


def test_a_sync_without_stacks_names_its_op(tmp_path):
    sites = sync_sites(load_trace(DATA / "sync_bound.json"), 0, 100 * US)
    assert [(s.site, s.calls, s.idle_ns) for s in sites] == [("cudaStreamSynchronize", 1, 65 * US)]


def test_exposed_communication_names_the_collectives(tmp_path):
    comm = _rules(DATA / "comm_bound.json")["communication"]
    assert "allreduce 60 us (1 call)" in comm.evidence


def _with_memory(tmp_path, reserved_gib, allocated_gib, kernel_us):
    """A step of one kernel and one allocation on an A100 of 40 GiB."""
    events = _launched([(TENSOR_OP, 10, kernel_us)], 100)
    _write(tmp_path, events, [A100])
    path = tmp_path / "t.json"
    doc = json.loads(path.read_text())
    args = {"Device Type": 1, "Device Id": 0, "Addr": 1, "Bytes": allocated_gib * 2**30}
    args |= {"Total Allocated": allocated_gib * 2**30, "Total Reserved": reserved_gib * 2**30}
    doc["traceEvents"].append(
        {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 20, "args": args}
    )
    path.write_text(json.dumps(doc))
    return load_trace(path)


def test_memory_headroom_and_fragmentation(tmp_path):
    """10 GiB reserved of 40 with the GPU busy 30%: room for a larger batch; 4 GiB of the 10
    cached but free at the peak: fragmentation. Neither has a time bound: they come last."""
    found = _advise(_with_memory(tmp_path, reserved_gib=10, allocated_gib=6, kernel_us=30))
    memory = [(r.rule, r.bound_ns) for r in found if r.rule in ("memory-headroom", "fragmentation")]
    assert memory == [("memory-headroom", 0), ("fragmentation", 0)]
    assert "10 GiB of 40 GiB (25%)" in found[-2].evidence
    assert "4 GiB (40%) cached but free" in found[-1].evidence
    assert "expandable_segments" in found[-1].change


def test_a_full_device_and_a_busy_gpu_get_no_memory_advice(tmp_path):
    full = _advise(_with_memory(tmp_path, reserved_gib=30, allocated_gib=29, kernel_us=30))
    assert not {r.rule for r in full} & {"memory-headroom", "fragmentation"}
    busy = _advise(_with_memory(tmp_path, reserved_gib=10, allocated_gib=10, kernel_us=89))
    assert "memory-headroom" not in {r.rule for r in busy}


def test_launch_calls_outweighing_their_work_fire_though_most_kernels_are_long(tmp_path):
    """Three 10 us kernels launched in 5 us and one 1 us kernel launched in 100 us: a quarter
    of the work is shorter than its launch, but the launches (115 us) outweigh the GPU time
    (31 us), the verdict's other branch."""
    events = [("user_annotation", "ProfilerStep#1", 1, 0, 200, {})]
    t = 0
    for corr, (launch, kernel) in enumerate(((5, 10), (5, 10), (5, 10), (100, 1)), 1):
        events.append(("cuda_runtime", "cudaLaunchKernel", 1, t, launch, {"correlation": corr}))
        events.append(("kernel", "k", 7, t + launch, kernel, {"correlation": corr}))
        t += launch + kernel + 1
    trace = _write(tmp_path, events)
    e = summarize(trace).verdict.evidence
    assert e.short_work_share < SHORT_KERNELS and e.launch_cpu_ns >= e.launched_gpu_ns
    launch = next(r for r in _advise(trace) if r.rule == "launch-overhead")
    assert launch.bound_ns == 115 * US  # the GPU idle under the launch calls
