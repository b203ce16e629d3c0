"""The op table against torch's own key_averages(), on a run that has everything at once:
with_stack (Python frames in the tree), record_shapes, profile_memory, a schedule that repeats,
nested record_function, ops on a second thread and a custom op whose body is Python."""

from __future__ import annotations

import math
import threading
from dataclasses import asdict

import pytest

from tests.profiling.reference import differences
from tui.model.analysis.ops import op_stats
from tui.model.ingest import load_trace


def _pybody(x):
    # A Python-bodied op: under with_stack its Python time is not its Self CPU.
    y = x * 2
    for _ in range(3):
        y = y + 1
    return y


def _run(torch, ready):
    """The profiled run: nested labels, a custom Python-bodied op, ops on a second thread."""
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    lib = torch.library.Library("tracetui_test", "DEF")  # the op lives as long as `lib`
    lib.define("pybody(Tensor x) -> Tensor")
    lib.impl("pybody", _pybody, "CPU")

    def step(x):
        with record_function("outer"), record_function("inner"):
            y = x @ x
        with record_function("outer"):
            z = torch.ops.tracetui_test.pybody(y)
        return z.sum()

    def other_thread():
        a = torch.randn(32, 32)
        for _ in range(3):
            with record_function("other_thread"):
                a = a @ a

    x = torch.randn(64, 64)
    config = torch._C._profiler._ExperimentalConfig(profile_all_threads=True)
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
        on_trace_ready=ready,
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
        experimental_config=config,
    ) as prof:
        for _ in range(8):
            worker = threading.Thread(target=other_thread)
            worker.start()
            step(x)
            worker.join()
            prof.step()


@pytest.fixture(scope="module")
def cycles(tmp_path_factory, torch):
    """(trace path, key_averages rows by name) for each of the schedule's two cycles."""
    out = tmp_path_factory.mktemp("key_averages")
    done = []

    def ready(prof):
        path = out / f"cycle{len(done)}.pt.trace.json"
        prof.export_chrome_trace(str(path))
        by_shape = {(e.key, str(e.input_shapes)): e for e in prof.key_averages(True)}
        done.append((path, {e.key: e for e in prof.key_averages()}, by_shape))

    _run(torch, ready)
    assert len(done) == 2
    return done


@pytest.mark.parametrize("cycle", [0, 1])
def test_every_row_matches_key_averages(cycles, cycle, export):
    """Every row as tests/profiling/reference.py compares them (calls exactly, times within a
    nanosecond a call), and memory exactly."""
    path, theirs, _ = cycles[cycle]
    trace = load_trace(path)
    rows = [asdict(export.op_totals(e)) for e in theirs.values()]
    assert differences(trace, rows) == []
    ours = {op.name: op for op in op_stats(trace)}
    for name, e in theirs.items():
        mine = ours[name]
        assert (mine.cpu_mem, mine.self_cpu_mem) == (e.cpu_memory_usage, e.self_cpu_memory_usage)
    # What the run was meant to hold: Python frames, the custom op, the second thread.
    assert any(name.endswith("_pybody") for name in ours)
    assert "tracetui_test::pybody" in ours and "other_thread" in ours
    assert len({lane.tid for lane in trace.lanes if lane.kind == "cpu"}) >= 2
    if any(ours[name].python for name in theirs):  # torch lists the frames (2.13): totals agree
        total = sum(o.self_cpu_ns for o in ours.values()) / 1e3
        theirs_total = sum(e.self_cpu_time_total for e in theirs.values())
        assert math.isclose(total, theirs_total, rel_tol=1e-6)


@pytest.mark.parametrize("cycle", [0, 1])
def test_the_by_shape_table_matches_key_averages_grouped_by_input_shape(cycles, cycle):
    """key_averages(group_by_input_shape=True): the same rows (name and input shapes), calls,
    Self CPU and CPU total; each row's least and most call bound its average."""
    path, _, theirs = cycles[cycle]
    ours = {(op.name, op.shapes): op for op in op_stats(load_trace(path), by_shape=True)}
    # torch 2.11 lists no Python frames, and its Self CPU then holds theirs (reference.py).
    frames_listed = any(ours[key].python for key in theirs if key in ours)
    if not frames_listed:
        ours = {key: op for key, op in ours.items() if not op.python}
    assert set(ours) == set(theirs)
    assert len({name for name, _ in ours}) < len(ours)  # some op ran with two shapes
    for key, e in theirs.items():
        mine = ours[key]
        tolerance_us = 0.001 * e.count + 1e-6
        assert mine.calls == e.count, key
        self_cpu = mine.self_cpu_ns / 1e3
        assert math.isclose(self_cpu, e.self_cpu_time_total, abs_tol=tolerance_us) or not (
            frames_listed
        )
        assert math.isclose(mine.cpu_total_ns / 1e3, e.cpu_time_total, abs_tol=tolerance_us)
        assert mine.cpu_min_ns <= mine.cpu_avg_ns <= mine.cpu_max_ns, key
