"""Self CUDA goes to the op whose `External id` the kernel carries, as key_averages() joins it;
Python frames never get it; older files' ids that name an unrelated op are not taken."""

from __future__ import annotations

import json

import pytest

from tests.conftest import raw_events, shared_model
from tests.tui.helpers import run
from tui.model.analysis.attribution import attribute
from tui.model.analysis.ops import op_stats
from tui.model.ingest import load_trace

US = 1000


def _x(name, cat, ts, dur, tid=1, pid=1, **args):
    return {
        "ph": "X",
        "name": name,
        "cat": cat,
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def _launch(ts, corr, ext=None, name="cudaLaunchKernel"):
    args = {"correlation": corr} | ({} if ext is None else {"External id": ext})
    return _x(name, "cuda_runtime", ts, 1, **args)


def _kernel(name, ts, dur, corr, ext=None):
    args = {"correlation": corr, "stream": 7} | ({} if ext is None else {"External id": ext})
    return _x(name, "kernel", ts, dur, pid=0, tid=7, **args)


def _write(tmp_path, events, name="t.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def _self_cuda(path):
    return {o.name: o.self_cuda_ns for o in op_stats(load_trace(path)) if o.self_cuda_ns}


def test_a_with_stack_trace_charges_the_op_not_the_python_frame(tmp_path):
    # vllm::moe_forward (id 7) > Python frame > aten::empty (id 8, no kernel) and the launch.
    path = _write(
        tmp_path,
        [
            _x("vllm::moe_forward", "cpu_op", 0, 100, **{"External id": 7}),
            _x("flashinfer/fused_moe/core.py(1633): moe_op", "python_function", 5, 90),
            _x("aten::empty", "cpu_op", 6, 2, **{"External id": 8}),
            _launch(20, corr=100, ext=7),
            _kernel("moe_kernel", 30, 60, corr=100, ext=7),
        ],
    )
    assert _self_cuda(path) == {"vllm::moe_forward": 60 * US}
    assert attribute(load_trace(path)).placed_by()["external_id"] == 1


def test_without_ids_the_innermost_op_that_is_not_a_python_frame_gets_it(tmp_path):
    path = _write(
        tmp_path,
        [
            _x("triton_poi_fused_add_0", "cpu_op", 0, 100),
            _x("<built-in function launch>", "python_function", 5, 90),
            _launch(20, corr=100, name="cuLaunchKernel"),
            _kernel("triton_poi_fused_add_0", 30, 40, corr=100),
        ],
    )
    assert _self_cuda(path) == {"triton_poi_fused_add_0": 40 * US}
    placed = attribute(load_trace(path)).placed_by()
    assert placed == {"external_id": 0, "enclosing_op": 1, "launch_call": 0, "none": 0}


def test_a_kernel_with_no_id_takes_its_launchs(tmp_path):
    path = _write(
        tmp_path,
        [
            _x("outer", "user_annotation", 0, 100, **{"External id": 1}),
            _x("aten::mm", "cpu_op", 10, 50, **{"External id": 2}),
            _x("<built-in method replay>", "python_function", 12, 40),
            _launch(20, corr=100, ext=1),  # issued while "outer" was on top of the op stack
            _kernel("gemm", 30, 40, corr=100),
        ],
    )
    assert _self_cuda(path) == {"outer": 40 * US}


def test_an_id_naming_an_op_that_does_not_hold_the_launch_is_not_taken(tmp_path):
    # Older Kineto files number ops and kernels from separate counters: id 9 is a view op.
    path = _write(
        tmp_path,
        [
            _x("aten::view", "cpu_op", 0, 5, **{"External id": 9}),
            _x("aten::copy_", "cpu_op", 10, 50, **{"External id": 3}),
            _launch(20, corr=100, ext=9),
            _kernel("copy_kernel", 30, 40, corr=100, ext=9),
        ],
    )
    assert _self_cuda(path) == {"aten::copy_": 40 * US}
    assert attribute(load_trace(path)).placed_by()["enclosing_op"] == 1


def test_an_id_on_a_folded_op_goes_to_the_op_it_folds_into(tmp_path):
    # key_averages() folds a same-named only child into its parent, kernels and all.
    path = _write(
        tmp_path,
        [
            _x("aten::linear", "cpu_op", 0, 100, **{"External id": 1}),
            _x("aten::linear", "cpu_op", 5, 90, **{"External id": 2}),
            _launch(20, corr=100, ext=2),
            _kernel("gemm", 30, 40, corr=100, ext=2),
        ],
    )
    ops = {o.name: o for o in op_stats(load_trace(path))}
    assert (ops["aten::linear"].calls, ops["aten::linear"].self_cuda_ns) == (1, 40 * US)


def test_an_id_carried_by_two_ops_falls_back_to_the_enclosing_op(tmp_path):
    path = _write(
        tmp_path,
        [
            _x("a", "user_annotation", 0, 100, **{"External id": 5}),
            _x("b", "cpu_op", 10, 50, **{"External id": 5}),
            _launch(20, corr=100, ext=5),
            _kernel("k", 30, 40, corr=100, ext=5),
        ],
    )
    assert _self_cuda(path) == {"b": 40 * US}
    assert attribute(load_trace(path)).placed_by()["enclosing_op"] == 1


@pytest.mark.parametrize("as_json", [False, True])
def test_info_counts_the_kernels_each_rule_placed(tmp_path, as_json):
    path = _write(
        tmp_path,
        [
            _x("op", "cpu_op", 0, 100, **{"External id": 7}),
            _launch(10, corr=100, ext=7),
            _kernel("k1", 20, 5, corr=100, ext=7),
            _x("bare", "cpu_op", 200, 100),
            _launch(210, corr=101),
            _kernel("k2", 220, 5, corr=101),
            _launch(400, corr=102),
            _kernel("k3", 420, 5, corr=102),
            _kernel("k4", 520, 5, corr=999),  # its launch is not in the trace
        ],
    )
    done = run("info", str(path), *(["--json"] if as_json else []))
    assert done.returncode == 0, done.stderr
    if as_json:
        placed = json.loads(done.stdout)["gpu_work_placed_by"]
        assert placed == {"external_id": 1, "enclosing_op": 1, "launch_call": 1, "none": 1}
    else:
        line = next(ln for ln in done.stdout.splitlines() if ln.startswith("gpu work"))
        assert line == (
            "gpu work   4 kernels and copies charged 1 by External id, 1 to the enclosing op,"
            " 1 to the launch call, 1 to no op (launch not in the trace)"
        )


def test_a_trace_whose_every_launch_correlation_is_taken_twice_loads(tmp_path):
    path = _write(
        tmp_path,
        [
            _x("op", "cpu_op", 0, 100),
            _launch(10, corr=100),
            _launch(20, corr=100),
            _kernel("k", 30, 5, corr=100),
        ],
    )
    assert attribute(load_trace(path)).placed_by()["none"] == 1  # ambiguous: not linked


def _oracle_external_id_count(path):
    """Kernels (and copies) whose `External id` (or their launch's) names exactly one op that
    holds the launch on its thread, in plain Python. Launches joined by `correlation`."""
    events = raw_events(path)
    xs = [e for e in events if e.get("ph") == "X" and isinstance(e.get("args"), dict)]
    ops: dict[int, list[dict]] = {}
    launches: dict[int, list[dict]] = {}
    for e in xs:
        cat, args = e.get("cat", "").lower(), e["args"]
        if cat in ("cpu_op", "user_annotation") and isinstance(args.get("External id"), int):
            ops.setdefault(args["External id"], []).append(e)
        if cat in ("cuda_runtime", "cuda_driver") and isinstance(args.get("correlation"), int):
            launches.setdefault(args["correlation"], []).append(e)
    placed = 0
    for e in xs:
        if e.get("cat", "").lower() not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        found = launches.get(e["args"].get("correlation"), [])
        if len(found) != 1:
            continue
        launch = found[0]
        ext = e["args"].get("External id", launch["args"].get("External id"))
        owners = ops.get(ext, []) if isinstance(ext, int) else []
        if len(owners) == 1:
            op = owners[0]
            same_thread = (op["pid"], op["tid"]) == (launch["pid"], launch["tid"])
            inside = (
                op["ts"] <= launch["ts"] and launch["ts"] + launch["dur"] <= op["ts"] + op["dur"]
            )
            placed += same_thread and inside
    return placed


@pytest.mark.parametrize(
    "name",
    [
        "tracelens/h100_timesformer.json.gz",
        "tracelens/mi300_vllm_graph_execution_full.json.gz",
        "hta/a100_nccl_2rank_rank0.json.gz",
        "param/linear_kineto_rtx2080ti.json.gz",
    ],
)
def test_the_external_id_join_matches_a_plain_python_oracle_on_real_traces(shared, name):
    placed = attribute(shared_model(shared / name)).placed_by()["external_id"]
    assert placed == _oracle_external_id_count(shared / name)
