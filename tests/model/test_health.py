"""Trace health: a hand-made trace breaking each of torch's trace-validator rules once, with
repairs; the counts against torch's own `validate_trace` on it and on the shared traces; info,
info --json, the header and the H screen."""

from __future__ import annotations

import collections
import json

import pytest

from tests.conftest import shared_model
from tests.tui.helpers import loaded, run
from tui.model.analysis.health import health
from tui.model.ingest import load_trace
from tui.screens.health import HealthScreen
from tui.widgets.timeline import Timeline
from tui.widgets.trace_summary import TraceSummary

CPU = {"pid": 1, "tid": 1}
GPU = {"pid": 0, "tid": 7}


def _x(name, ts, dur, cat="cpu_op", where=CPU, **args):
    return {"ph": "X", "cat": cat, "name": name, **where, "ts": ts, "dur": dur, "args": args}


EVENTS = [
    # A kernel that starts 5 us before its launch (clock skew).
    _x("cudaLaunchKernel", 100, 10, "cuda_runtime", **{"External id": 1, "correlation": 1}),
    _x(
        "skewed",
        95,
        50,
        "kernel",
        GPU,
        **{"External id": 1, "correlation": 1, "stream": 7, "device": 0},
    ),
    # A stream wait naming no event record, and one naming a record that comes after it.
    _x(
        "Stream Wait Event",
        300,
        1,
        "cuda_sync",
        GPU,
        cuda_sync_kind="Stream Wait Event",
        wait_on_cuda_event_record_corr_id=-1,
        stream=7,
        device=0,
    ),
    _x(
        "Stream Wait Event",
        310,
        1,
        "cuda_sync",
        GPU,
        cuda_sync_kind="Stream Wait Event",
        wait_on_cuda_event_record_corr_id=42,
        stream=7,
        device=0,
    ),
    _x("cudaEventRecord", 400, 2, "cuda_runtime", **{"External id": 42, "correlation": 42}),
    # A stream sync starting inside a kernel of its stream.
    _x("long_kernel", 500, 100, "kernel", GPU, stream=7, device=0),
    _x("Stream Sync", 550, 60, "cuda_sync", GPU, cuda_sync_kind="Stream Sync", stream=7, device=0),
    # A collective without its NCCL metadata, and one with it.
    _x("record_param_comms", 700, 5, **{"Collective name": "all_reduce"}),
    _x(
        "record_param_comms",
        710,
        5,
        **{
            "Collective name": "all_reduce",
            "dtype": "Float",
            "In msg nelems": 4,
            "Out msg nelems": 4,
            "Group size": 2,
        },
    ),
    # One sequence number, two backward ops.
    _x("autograd::engine::evaluate_function: MulBackward0", 800, 5, **{"Sequence number": 9}),
    _x("autograd::engine::evaluate_function: AddBackward0", 810, 5, **{"Sequence number": 9}),
    # Two slices that partly overlap on one row.
    _x("first", 900, 20),
    _x("second", 910, 20),
    # A begin that never ends.
    {"ph": "B", "name": "open", **CPU, "ts": 950},
]


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    path = tmp_path_factory.mktemp("health") / "broken.json"
    path.write_text(json.dumps({"traceEvents": EVENTS}))
    return path


def test_each_rule_counts_its_breaks_and_the_repairs(broken):
    trace = load_trace(broken)
    found = health(trace)
    checks = {f.rule: f for f in found.checks}
    assert {rule: f.count for rule, f in checks.items()} == {
        "_check_gpu_kernel_causality": 1,
        "_check_stream_wait_corr_id_populated": 1,
        "_check_stream_wait_corr_id_in_past": 1,
        "_check_stream_sync_overlap": 1,
        "_check_nccl_metadata": 1,
        "_check_backward_seq_id_uniqueness": 1,
    }
    names = {f.rule: [trace.slice_name(r) for r in f.examples] for f in found.checks}
    assert names["_check_gpu_kernel_causality"] == ["skewed"]
    assert names["_check_backward_seq_id_uniqueness"] == [
        "autograd::engine::evaluate_function: MulBackward0",
        "autograd::engine::evaluate_function: AddBackward0",
    ]
    repairs = {f.what: f for f in found.repairs}
    overlap = next(f for w, f in repairs.items() if w.startswith("slices partly overlapping"))
    # The stream sync outlasting the kernel it started in is one too.
    assert [trace.slice_name(r) for r in overlap.examples] == ["Stream Sync", "second"]
    assert any("closed at the trace end" in w for w in repairs)
    assert (
        found.line == f"health: 6 checks fail, {sum(f.count for f in found.repairs)} repaired (H)"
    )


def _torch_counts(path) -> dict[str, int]:
    validator = pytest.importorskip(
        "torch.profiler._trace_validator", reason="torch is not installed (the profiling extra)"
    )
    _, violations = validator.validate_trace(str(path))
    return dict(collections.Counter(v.rule_name for v in violations))


def _ours(trace) -> dict[str, int]:
    return {f.rule: f.count for f in health(trace).checks}


def test_the_hand_made_trace_breaks_torchs_rules_as_counted(broken):
    assert _ours(load_trace(broken)) == _torch_counts(broken)


@pytest.mark.parametrize(
    "name",
    [
        "hta/a100_ws16_rank0_negative_queue_len.json.gz",
        "hta/v100_ws2_rank1_trace_diff_test.json.gz",
        "kineto/h100_before_fix_trace.json",
        "kineto/h100_after_fix_trace.json",
        "tracelens/h100_qwen1.5_0.5b_chat.json.gz",
        "tracelens/mi300_vllm_graph_capture_full.pt.trace.json.gz",
    ],
)
def test_the_counts_equal_torchs_validator_on_real_traces(shared, name):
    assert _ours(shared_model(shared / name)) == _torch_counts(shared / name)


def test_info_and_its_json_list_them(broken):
    text = run("info", str(broken)).stdout
    assert "health     6 checks fail" in text
    assert "[_check_stream_sync_overlap], first: Stream Sync at +455 us" in text  # from 95 us
    doc = json.loads(run("info", str(broken), "--json").stdout)["health"]
    causality = next(c for c in doc["checks"] if c["rule"] == "_check_gpu_kernel_causality")
    assert causality["count"] == 1 and causality["examples"][0]["name"] == "skewed"
    assert causality["examples"][0]["ts_ns"] == 0  # the first timestamp of the trace
    assert {"line", "checks", "repairs"} <= set(doc)


async def test_the_header_says_it_and_h_jumps_to_an_example(broken):
    async with loaded(broken, (120, 30)) as (pilot, app):
        await app.workers.wait_for_complete()
        await pilot.pause()
        head = str(app.query_one(TraceSummary).render()).splitlines()[0]
        assert head.endswith("health: 6 checks fail, 3 repaired (H)")
        await pilot.press("H")
        assert isinstance(app.screen, HealthScreen)
        await pilot.press("enter")  # the first example, highlighted: the skewed kernel
        assert not isinstance(app.screen, HealthScreen)
        timeline = app.query_one(Timeline)
        assert timeline.trace.slice_name(timeline.selected) == "skewed"
