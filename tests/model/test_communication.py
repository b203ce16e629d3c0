"""Communication is every collective kernel, not only NCCL's: the kernel-name families serving
engines, torch's symmetric memory and expert-parallel libraries write, and any kernel a
collective op launches. Summary, verdict, diff and the rank table all follow."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import raw_events, shared_model
from tests.tui.helpers import run
from tui.model.analysis.collectives import collectives
from tui.model.analysis.gpu_time import COMM, work_class
from tui.model.ingest import load_trace

US = 1000


def _x(name, cat, ts, dur, tid=1, pid=1, **args):
    event = {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    return event | {"args": args}


def _step(comm_kernel, op="custom_op", comm_us=80, rank=0):
    """A 100 us step: a 10 us GEMM, then `comm_kernel` launched by `op` for `comm_us`, alone."""
    ext = {"External id": 2}
    return {
        "distributedInfo": {"rank": rank, "world_size": 2},
        "traceEvents": [
            _x("ProfilerStep#1", "user_annotation", 0, 100),
            _x("aten::mm", "cpu_op", 1, 3, **{"External id": 1}),
            _x("cudaLaunchKernel", "cuda_runtime", 2, 1, correlation=10, **{"External id": 1}),
            _x("gemm", "kernel", 2, 10, pid=0, tid=7, correlation=10, stream=7),
            _x(op, "cpu_op", 5, 3, **ext),
            _x("cudaLaunchKernel", "cuda_runtime", 6, 1, correlation=11, **ext),
            _x(comm_kernel, "kernel", 15, comm_us, pid=0, tid=7, correlation=11, stream=7),
        ],
    }


def _write(path, doc):
    path.write_text(json.dumps(doc))
    return path


def _summary(path):
    done = run("summary", str(path), "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


FAMILIES = [
    (
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        "allreduce",
    ),
    ("void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 16>(float**)", "allreduce"),
    ("void c10d::symmetric_memory::multimem_all_gather_kernel<16>(char*)", "allgather"),
    (
        "void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8>(AllReduceParams)",
        "allreduce",
    ),
    (
        "void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<8>()",
        "allreduce",
    ),
    ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*)", "allreduce"),
    (
        "void aiter::cross_device_reduce_2stage_naive<__hip_bfloat16, 8>(aiter::RankData*)",
        "allreduce",
    ),
    ("void quickreduce::allreduce_prototype_twoshot<quickreduce::CodecFP>(int)", "allreduce"),
    ("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)", "alltoall"),
    ("void deep_ep::internode_ll::combine<false, 7168>(void*, int*)", "alltoall"),
    ("nvshmemi_transfer_rma_nbi_kernel", None),
    ("userbuffers_fp16_sum_inplace_gpu_rw(int, int, int)", None),
]


@pytest.mark.parametrize(("kernel", "kind"), FAMILIES, ids=[f[0][:32] for f in FAMILIES])
def test_each_family_of_collective_kernels_is_communication(tmp_path, kernel, kind):
    doc = _summary(_write(tmp_path / "t.json", _step(kernel)))
    s = doc["summary"]
    assert (s["computation_ns"], s["communication_ns"], s["exposed_comm_ns"]) == (
        10 * US,
        80 * US,
        80 * US,
    )
    assert doc["verdict"]["label"] == "communication-bound"
    (found,) = collectives(load_trace(tmp_path / "t.json"))
    assert found.dur_ns == 80 * US
    assert found.kind == (kind or kernel.split("(")[0])


@pytest.mark.parametrize(
    "op",
    [
        "symm_mem::one_shot_all_reduce",
        "_c10d_functional::all_reduce",
        "c10d::allgather_",
        "_C_custom_ar::all_reduce",
        "sgl_kernel::all_reduce",
        "record_param_comms",
    ],
)
def test_any_kernel_a_collective_op_launches_is_communication(tmp_path, op):
    trace = load_trace(_write(tmp_path / "t.json", _step("my_reduce_kernel", op=op)))
    assert int(np.count_nonzero(work_class(trace) == COMM)) == 1
    (found,) = collectives(trace)
    assert found.kind == ("allgather" if "allgather" in op else "allreduce") or op.startswith(
        "record"
    )


@pytest.mark.parametrize(
    ("kernel", "op"),
    [
        ("triton_poi_fused_all_gather_0", "triton_poi_fused_all_gather_0"),
        ("triton_per_fused__c10d_functional_all_reduce_1", "aten::add"),
        ("my_reduce_kernel", "aten::sum"),
    ],
)
def test_a_kernel_only_named_after_a_collective_is_computation(tmp_path, kernel, op):
    s = _summary(_write(tmp_path / "t.json", _step(kernel, op=op)))["summary"]
    assert (s["computation_ns"], s["communication_ns"]) == (90 * US, 0)


def test_a_diff_and_a_rank_set_count_the_same_communication(tmp_path):
    kernel = "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*)"
    base = _write(tmp_path / "base.json", _step("gemm_2"))
    new = _write(tmp_path / "new.json", _step(kernel))
    done = run("diff", str(base), str(new), "--format", "json")
    assert done.returncode == 0, done.stderr
    diff = json.loads(done.stdout)
    assert (diff["base"]["communication_ns"], diff["new"]["communication_ns"]) == (0, 80 * US)
    assert diff["new"]["verdict"] == "communication-bound"
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for rank in (0, 1):
        _write(ranks / f"rank{rank}.json", _step(kernel, comm_us=40 + 20 * rank, rank=rank))
    done = run("summary", str(ranks), "--format", "json")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    assert [r["communication_ns"] for r in table["ranks"]] == [40 * US, 60 * US]
    (matched,) = table["collectives"]
    assert (matched["kind"], matched["ranks"], matched["waits_ns"]) == (
        "allreduce",
        [0, 1],
        {"0": 0, "1": 20 * US},
    )


# An independent reading of the rule: lower-case name fragments, op namespaces.
_KERNEL_WORDS = ["nccl", "rccl", "hccl", "msccl", "symmetric_memory", "multimem_", "nvshmem"]
_KERNEL_WORDS += ["cross_device_reduce", "customallreduce", "custom_all_reduce", "quickreduce"]
_KERNEL_WORDS += ["oneshotallreduce", "one_shot_all_reduce", "twoshotallreduce"]
_KERNEL_WORDS += ["two_shot_all_reduce", "allreduce_fusion", "deep_ep::", "deepep::"]
_KERNEL_WORDS += ["userbuffers"]
_OP_SPACES = ("c10d::", "_c10d_functional::", "c10d_functional::", "symm_mem::", "_C_custom_ar::")


def _oracle_comm_count(path):
    """Kernels that are communication in plain Python: by name, or by the one op that
    carries the kernel's (or its launch's) External id."""
    events = raw_events(path)
    xs = [e for e in events if e.get("ph") == "X" and isinstance(e.get("args"), dict)]
    ops: dict[int, list[str]] = {}
    launch_ext: dict[int, list] = {}
    for e in xs:
        cat, args = e.get("cat", "").lower(), e["args"]
        if cat in ("cpu_op", "user_annotation") and isinstance(args.get("External id"), int):
            ops.setdefault(args["External id"], []).append(e["name"])
        if cat in ("cuda_runtime", "cuda_driver") and isinstance(args.get("correlation"), int):
            launch_ext.setdefault(args["correlation"], []).append(args.get("External id"))
    count = 0
    for e in xs:
        if e.get("cat", "").lower() not in ("kernel", "gpu_memset"):
            continue
        name = e["name"].lower()
        launch = launch_ext.get(e["args"].get("correlation"), [])
        ext = e["args"].get("External id", launch[0] if len(launch) == 1 else None)
        owner = ops.get(ext, []) if isinstance(ext, int) else []
        by_op = len(owner) == 1 and (
            owner[0].startswith(_OP_SPACES) or owner[0] == "record_param_comms"
        )
        count += any(w in name for w in _KERNEL_WORDS) or by_op
    return count


@pytest.mark.parametrize(
    "name",
    [
        "hta/a100_nccl_2rank_rank0.json.gz",
        "tracelens/mi300_resnet_act_checkpoint_ws8_rank0.json.gz",
        "hta/v100_ws2_rank1_trace_diff_test.json.gz",
        "tracelens/mi300_vllm_graph_execution_full.json.gz",  # a serving engine's: none
    ],
)
def test_the_communication_kernels_match_a_plain_python_oracle_on_real_traces(shared, name):
    trace = shared_model(shared / name)
    assert int(np.count_nonzero(work_class(trace) == COMM)) == _oracle_comm_count(shared / name)
