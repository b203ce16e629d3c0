"""Two traces compared: a hand-made eager/compiled pair whose region's kernels fuse, and the
shared before/after and cross-vendor pairs, where every delta is NEW minus BASE of the two
single-trace tables and every op of either side is in exactly one row."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from tests.conftest import shared_model
from tui.model.analysis.diff import (
    ADDED,
    MATCHED,
    REMOVED,
    aligned_window,
    diff,
    ranked,
    regressed,
)
from tui.model.analysis.kernels import kernel_stats
from tui.model.analysis.ops import op_stats
from tui.model.analysis.scope import Scope
from tui.model.ingest import load_trace

PAIRS = [
    ("kineto/h100_before_fix_trace.json", "kineto/h100_after_fix_trace.json"),
    ("hta/trace_compare_base_rank1.json.gz", "hta/trace_compare_test_rank1.json.gz"),
    ("tracelens/h100_bert_small.json.gz", "tracelens/mi300_bert_small.json.gz"),
]


def step_trace(path, kernels_per_step, steps=2, step_us=100.0):
    """`steps` ProfilerSteps, each with an `attn` record_function launching the given kernels
    (name, dur us) from one aten op, and an `aten::mm` outside it launching `mm_kernel`."""
    events, corr = [], 1
    cpu = {"pid": 1, "tid": 1}
    for k in range(steps):
        t = k * step_us
        events += [
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k}", **cpu, "ts": t,
             "dur": step_us - 1},
            {"ph": "X", "cat": "user_annotation", "name": "attn", **cpu, "ts": t + 1, "dur": 40},
            {"ph": "X", "cat": "cpu_op", "name": "aten::attn_impl", **cpu, "ts": t + 2,
             "dur": 30},
        ]  # fmt: skip
        launch_at, gpu_at = t + 3, t + 10
        for name, dur in [*kernels_per_step, ("mm_kernel", 5.0)]:
            if name == "mm_kernel":
                launch_at = t + 50
                events.append(
                    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", **cpu, "ts": t + 49,
                     "dur": 6}
                )  # fmt: skip
            events += [
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", **cpu,
                 "ts": launch_at, "dur": 2, "args": {"correlation": corr}},
                {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": gpu_at,
                 "dur": dur, "args": {"correlation": corr}},
            ]  # fmt: skip
            corr += 1
            launch_at += 3
            gpu_at += dur + 1
    path.write_text(json.dumps({"traceEvents": events}))
    return load_trace(path)


@pytest.fixture
def eager_compiled(tmp_path):
    eager = step_trace(
        tmp_path / "eager.json", [("k_softmax", 10.0), ("k_mul", 10.0), ("k_add", 10.0)]
    )
    compiled = step_trace(tmp_path / "compiled.json", [("triton_fused_attn", 12.0)], steps=3)
    return eager, compiled


def test_a_fused_region_lines_up_and_its_kernels_show_as_replaced(eager_compiled):
    d = diff(*eager_compiled)
    attn = next(r for r in d.regions if r.name == "attn")
    assert attn.status == MATCHED
    assert (attn.value("base", "gpu_ns"), attn.value("new", "gpu_ns")) == (60_000, 36_000)
    assert (attn.value("base", "kernels"), attn.value("new", "kernels")) == (6, 3)
    assert attn.delta("gpu_ns") == -24_000 and attn.percent("gpu_ns") == pytest.approx(-40.0)
    assert attn.replaced == (["k_add", "k_mul", "k_softmax"], ["triton_fused_attn"])
    kernels = {r.name: r.status for r in d.kernels}
    assert kernels == {
        "k_softmax": REMOVED,
        "k_mul": REMOVED,
        "k_add": REMOVED,
        "mm_kernel": MATCHED,
        "triton_fused_attn": ADDED,
    }
    mm = next(r for r in d.kernels if r.name == "mm_kernel")
    assert (mm.value("base", "calls"), mm.value("new", "calls")) == (2, 3)
    # Step time compares the median step; the step counts differ and a note says so.
    assert (d.base.steps, d.new.steps) == (2, 3)
    assert d.base.step_median_ns == d.new.step_median_ns == 99_000
    assert any("BASE has 2 steps and NEW 3" in n for n in d.notes)
    assert ranked(d.kernels, "total_ns")[0].name == "triton_fused_attn"  # +36 us


def test_regressions_are_judged_on_the_median_step(tmp_path):
    fast = step_trace(tmp_path / "fast.json", [("k", 10.0)], step_us=100.0)
    slow = step_trace(tmp_path / "slow.json", [("k", 10.0)], step_us=120.0)
    d = diff(fast, slow)
    assert regressed(d, "step", 10.0) == pytest.approx(100.0 * (119 - 99) / 99)
    assert regressed(d, "step", 25.0) is None
    assert regressed(diff(slow, fast), "step", 0.0) is None  # faster is no regression


def _check_rows(rows, base_rows, new_rows, columns):
    names = [r.name for r in rows]
    assert len(names) == len(set(names))
    assert set(names) == set(base_rows) | set(new_rows)  # matched + added + removed = all
    for r in rows:
        assert (r.base is not None) == (r.name in base_rows)
        assert (r.new is not None) == (r.name in new_rows)
        for c in columns:
            before = getattr(base_rows[r.name], c) if r.name in base_rows else 0
            after = getattr(new_rows[r.name], c) if r.name in new_rows else 0
            assert r.value("base", c) == before and r.value("new", c) == after
            assert r.delta(c) == after - before


def _without_addresses(rows):
    """The op table's rows by name, an object's address cut from a frame's (`... object at
    0x7f...>`), their numbers added up."""
    columns = ("calls", "self_cpu_ns", "cpu_total_ns", "self_cuda_ns", "cuda_total_ns")
    out = {}
    for row in rows:
        name = re.sub(r" at 0x[0-9a-fA-F]+", "", row.name)
        seen = out.setdefault(name, SimpleNamespace(**dict.fromkeys(columns, 0)))
        for c in columns:
            setattr(seen, c, getattr(seen, c) + getattr(row, c))
    return out


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p[0].split("/")[-1])
def test_every_delta_is_new_minus_base_of_the_single_trace_tables(shared, pair):
    base, new = (shared_model(shared / p) for p in pair)
    d = diff(base, new)
    ops = [_without_addresses(op_stats(t, Scope())) for t in (base, new)]
    kernels = [{k.name: k for k in kernel_stats(t, Scope())} for t in (base, new)]
    _check_rows(d.ops, *ops, ("calls", "self_cpu_ns", "cpu_total_ns", "self_cuda_ns"))
    _check_rows(d.ops, *ops, ("cuda_total_ns",))
    _check_rows(d.kernels, *kernels, ("calls", "total_ns", "min_ns", "max_ns"))
    assert 0.0 <= d.matched_share <= 1.0


def test_the_same_trace_twice_changes_nothing(shared):
    trace = shared_model(shared / PAIRS[2][0])
    d = diff(trace, trace)
    assert d.matched_share == 1.0 and not d.notes
    assert all(r.status == MATCHED for r in d.ops + d.kernels + d.regions)
    assert all(r.delta(c) == 0 for r in d.ops for c in ("self_cpu_ns", "self_cuda_ns"))
    assert regressed(d, "step", 0.0) is None


def test_unrelated_traces_still_diff_and_say_how_little_matched(shared, eager_compiled):
    d = diff(eager_compiled[0], shared_model(shared / PAIRS[2][0]))
    assert d.matched_share < 0.5
    assert any("unrelated" in n for n in d.notes)


def test_a_window_moves_to_the_same_place_in_the_same_step(tmp_path):
    two = step_trace(tmp_path / "two.json", [("k", 10.0)], steps=2, step_us=100.0)
    three = step_trace(tmp_path / "three.json", [("k", 10.0)], steps=3, step_us=130.0)
    assert aligned_window(two, three, (105_000, 125_000)) == (135_000, 155_000)
    # Past the last step of the other trace: its last step.
    assert aligned_window(three, two, (265_000, 266_000)) == (105_000, 106_000)
    assert aligned_window(two, three, (1_000, 2_000)) == (1_000, 2_000)  # the first step


def test_python_frames_match_without_their_object_addresses(tmp_path):
    """The same frame in two runs, its object at two addresses: one matched row, not an added
    and a removed one; two objects of one run's frame add up under the one name."""

    def run(path, addresses):
        events = [
            {"ph": "X", "cat": "python_function", "pid": 1, "tid": 1, "ts": 10 * k, "dur": 5,
             "name": f"<built-in method copy_ of Tensor object at {address}>"}
            for k, address in enumerate(addresses)
        ]  # fmt: skip
        path.write_text(json.dumps({"traceEvents": events}))
        return load_trace(path)

    base = run(tmp_path / "base.json", ["0x7f3a00001000"])
    new = run(tmp_path / "new.json", ["0x7f9b00002000", "0x7f9b00003000"])
    found = diff(base, new)
    rows = [r for r in found.ops if "copy_" in r.name]
    assert [r.name for r in rows] == ["<built-in method copy_ of Tensor object>"]
    (row,) = rows
    assert (row.base["calls"], row.new["calls"], row.status) == (1, 2, MATCHED)
