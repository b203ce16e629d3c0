"""The call tree on a hand-made nested trace with known totals: every node's total is its self
plus its children's, the root the scope's, GPU-weighted totals the op table's CUDA totals;
bottom-up, modules, scopes; `summary --tree`; the pane's keys; the shared Qwen trace's heaviest
GPU path."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import shared_model
from tests.tui.helpers import built, loaded, run
from tui.model.analysis.call_tree import bottom_up, call_tree
from tui.model.analysis.ops import UNLAUNCHED, op_stats
from tui.model.analysis.scope import Scope
from tui.model.ingest import load_trace
from tui.widgets.timeline import Timeline
from tui.widgets.tree_pane import TreePane

US = 1000
CPU = {"pid": 1, "tid": 1}
GPU = {"pid": 0, "tid": 7}


def _x(name, ts, dur, cat="cpu_op"):
    return {"ph": "X", "cat": cat, "name": name, **CPU, "ts": ts, "dur": dur}


def _launch(ts, corr, kernel, dur):
    return [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", **CPU, "ts": ts,
         "dur": 2, "args": {"correlation": corr}},
        {"ph": "X", "cat": "kernel", "name": kernel, **GPU, "ts": ts + 50, "dur": dur,
         "args": {"correlation": corr}},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """Two steps of `train.py: step` > `nn.Module: Net` > (`nn.Module: Linear` > aten::mm) and
    aten::relu; the second step's Linear runs twice."""
    events = []
    for step, t in enumerate((0, 1000)):
        events += [
            _x(f"ProfilerStep#{step + 1}", t, 900, "user_annotation"),
            _x("train.py(10): step", t + 10, 800, "python_function"),
            _x("nn.Module: Net", t + 20, 700, "python_function"),
            _x("nn.Module: Linear", t + 30, 200, "python_function"),
            _x("aten::mm", t + 40, 100),
            *_launch(t + 50, 10 * step + 1, "gemm", 300),
            _x("aten::relu", t + 300, 50),
            *_launch(t + 310, 10 * step + 2, "relu_kernel", 40),
        ]
        if step:
            events += [
                _x("nn.Module: Linear", t + 400, 200, "python_function"),
                _x("aten::mm", t + 410, 100),
                *_launch(t + 420, 10 * step + 3, "gemm", 100),
            ]
    # The profiler's own span on its Spans track: no one's call path.
    events.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
                   "tid": "PyTorch Profiler", "ts": 0, "dur": 2000})  # fmt: skip
    path = tmp_path_factory.mktemp("tree") / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return load_trace(path)


def _by_path(tree):
    return {" > ".join(tree.label(n) for n in tree.path(k)): k for k in range(1, len(tree.parent))}


@pytest.mark.parametrize("weight", ["cpu", "gpu"])
def test_every_total_is_its_self_plus_its_childrens(trace, weight):
    tree = call_tree(trace, weight=weight)
    for node in range(len(tree.parent)):
        kids = tree.children(node)
        assert tree.total[node] == tree.self_[node] + sum(int(tree.total[k]) for k in kids) or (
            node == 0
        )
    assert tree.total[0] == sum(int(tree.total[k]) for k in tree.children(0))


def test_cpu_and_gpu_weights_have_the_known_values(trace):
    cpu = call_tree(trace, weight="cpu")
    paths = _by_path(cpu)
    # The steps are one node, as torch's table folds them: their Linear calls are one path.
    linear = paths["ProfilerStep* > train.py(10): step > nn.Module: Net > nn.Module: Linear"]
    assert (cpu.calls[linear], cpu.total[linear], cpu.self_[linear]) == (3, 600 * US, 300 * US)
    step = paths["ProfilerStep*"]
    assert (cpu.calls[step], cpu.total[step], cpu.self_[step]) == (2, 1800 * US, 200 * US)
    assert cpu.total[0] == 1800 * US  # the two steps; the profiler's span is not counted
    gpu = call_tree(trace, weight="gpu")
    assert gpu.total[0] == (300 + 40 + 300 + 40 + 100) * US  # all GPU work
    heaviest = [gpu.label(n) for n in gpu.heaviest_path()]
    assert heaviest == ["(all)", "ProfilerStep*", "train.py(10): step", "nn.Module: Net",
                        "nn.Module: Linear", "aten::mm"]  # fmt: skip
    # A scope of one step keeps its name.
    one = call_tree(trace, Scope(1000 * US, 2000 * US), weight="cpu")
    assert [one.label(k) for k in one.children(0)] == ["ProfilerStep#2"]
    up = bottom_up(trace, weight="cpu")
    assert "ProfilerStep*" in up.names and "ProfilerStep#1" not in {
        up.label(k) for k in range(1, len(up.parent))
    }


def test_gpu_totals_per_op_equal_the_op_tables_cuda_totals(trace):
    gpu = call_tree(trace, weight="gpu")
    per_name: dict[str, int] = {}
    for node in range(1, len(gpu.parent)):
        per_name[gpu.label(node)] = per_name.get(gpu.label(node), 0) + int(gpu.total[node])
    for op in op_stats(trace):
        if op.name in per_name:
            assert per_name[op.name] == op.cuda_total_ns, op.name


def test_bottom_up_modules_and_scopes(trace):
    up = bottom_up(trace, weight="gpu")
    first = up.children(0)[0]
    assert (up.label(first), int(up.total[first])) == ("aten::mm", 700 * US)
    callers = [up.label(k) for k in up.children(first)]
    assert callers == ["nn.Module: Linear"]
    modules = call_tree(trace, weight="cpu", modules=True)
    (net,) = modules.children(0)
    assert modules.label(net) == "nn.Module: Net" and modules.calls[net] == 2
    assert modules.self_[net] == 2 * 700 * US - 3 * 200 * US  # less its Linear modules
    step2 = call_tree(trace, Scope(1000 * US, 2000 * US), weight="gpu")
    assert step2.total[0] == (300 + 40 + 100) * US


def test_summary_tree_prints_it_to_a_depth(trace):
    text = run("summary", trace.path, "--tree", "--weight", "cpu", "--depth", "3").stdout
    lines = text.splitlines()
    assert re.split(r"\s{2,}", lines[1].strip()) == [
        "Total",
        "Total %",
        "Self",
        "# of Calls",
        "Name",
    ]
    assert re.search(r"1.8 ms\s+100.0%", lines[2]) and lines[2].endswith("(all)")
    # Three levels: the root, the steps, and what is under each (100 us of each step's own).
    assert [line.split()[-1] for line in lines[2:]] == ["(all)", "ProfilerStep*", "step"]
    assert lines[3].split()[:6] == ["1.8", "ms", "100.0%", "200", "us", "2"]
    doc = json.loads(run("summary", trace.path, "--tree", "--format", "json").stdout)
    assert doc["weight"] == "gpu" and doc["root"]["total_ns"] == 780 * US
    up = run("summary", trace.path, "--tree", "--view", "bottom-up").stdout
    assert "aten::mm" in up.splitlines()[3]
    for flags in (["--tree", "--depth", "0"], ["--depth", "3"], ["--tree", "--roofline"],
                  ["--tree", "--top", "3"], ["--view", "modules"]):  # fmt: skip
        bad = run("summary", trace.path, *flags)
        assert bad.returncode == 2 and not bad.stdout, flags
    step = run("summary", trace.path, "--tree", "--step", "2", "--format", "json").stdout
    assert json.loads(step)["root"]["total_ns"] == 440 * US  # ProfilerStep#2's GPU time
    doc = json.loads(run("summary", trace.path, "--tree", "--format", "json").stdout)
    first = doc["root"]["children"][0]
    assert first["frames"] == ["ProfilerStep*", "train.py(10): step", "nn.Module: Net"]
    assert first["name"] == "nn.Module: Net" and "hidden_ns" in first


async def test_the_pane_opens_the_heaviest_path_and_enter_goes_to_it(trace):
    async with loaded(trace.path, (120, 40)) as (pilot, app):
        await pilot.press("T")
        await built(app, pilot)
        pane = app.query_one(TreePane)
        tree = pane.query_one("#calls")
        assert pane.weight == "gpu"
        cursor = tree.cursor_node
        assert pane.calls.label(cursor.data) == "aten::mm"  # the end of the heaviest path
        await pilot.press("enter")
        timeline = app.query_one(Timeline)
        assert timeline.trace.slice_name(timeline.selected) == "aten::mm"
        await pilot.press("x")
        await built(app, pilot)
        assert pane.weight == "cpu" and pane.calls.weight == "cpu"
        await pilot.press("u")
        await built(app, pilot)
        assert pane.view == "bottom-up" and pane.calls.inverted
        await pilot.press("u", "v")
        await built(app, pilot)
        assert pane.view == "modules" and pane.scope_name == "view"
        await pilot.press("escape")
        assert not app.query(TreePane)
        await pilot.press("T", "t")  # the stats pane takes its place
        assert not app.query(TreePane)


def test_each_thread_is_a_root_where_the_tops_are_on_several(tmp_path):
    """The autograd engine's thread runs the backward ops as tops of its own: each thread is a
    node under the root, with its tops' count and total, and enter goes to its longest top."""
    autograd = {"pid": 1, "tid": 2}
    events = [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "pt_autograd_0"}},
        _x("ProfilerStep#1", 0, 900, "user_annotation"),
        _x("ProfilerStep#2", 1000, 900, "user_annotation"),
        {**_x("autograd::engine::evaluate_function: MmBackward0", 100, 300), **autograd},
        {**_x("autograd::engine::evaluate_function: MmBackward0", 1100, 200), **autograd},
        {**_x("autograd::engine::evaluate_function: AddBackward0", 1400, 50), **autograd},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_trace(path)
    tree = call_tree(trace, weight="cpu")
    threads = tree.children(0)
    labels = [tree.label(k) for k in threads]
    assert len(labels) == 2 and "pt_autograd_0" in labels[1], labels
    main, backward = threads
    assert (tree.calls[main], tree.total[main], tree.self_[main]) == (2, 1800 * US, 0)
    assert (tree.calls[backward], tree.total[backward]) == (3, 550 * US)
    assert tree.total[0] == 2350 * US
    kids = [tree.label(k) for k in tree.children(backward)]
    assert kids == [
        "autograd::engine::evaluate_function: MmBackward0",
        "autograd::engine::evaluate_function: AddBackward0",
    ]
    assert trace.slices.dur[tree.longest[backward]] == 300 * US
    # On one thread, no thread nodes.
    one = call_tree(trace, Scope(0, 90 * US), weight="cpu")
    assert [one.label(k) for k in one.children(0)] == ["ProfilerStep#1"]


def test_an_empty_view_says_why(tmp_path):
    from tui.model.present.tree_report import empty_reason

    path = tmp_path / "ops.json"
    path.write_text(json.dumps({"traceEvents": [_x("aten::mm", 0, 10)]}))
    ops = load_trace(path)
    modules = call_tree(ops, weight="cpu", modules=True)
    assert "no nn.Module frames" in empty_reason(ops, modules, "modules")
    gpu = call_tree(ops, weight="gpu")
    assert "CPU time (x, --weight cpu)" in empty_reason(ops, gpu, "top-down")
    assert empty_reason(ops, call_tree(ops, weight="cpu"), "top-down") is None


def test_the_heaviest_gpu_path_of_the_qwen_trace(shared):
    trace = shared_model(shared / "tracelens" / "h100_qwen1.5_0.5b_chat.json.gz")
    gpu = call_tree(trace, weight="gpu")
    path = [gpu.label(n) for n in gpu.heaviest_path()]
    assert "nn.Module: Qwen2Model_0" in path and path[-1].startswith("aten::")
    modules = call_tree(trace, weight="gpu", modules=True)
    layers = [modules.label(k) for k in modules.children(modules.children(0)[0])]
    assert layers[0].startswith("nn.Module: Qwen2DecoderLayer_")
    # All GPU work whose launch is in the trace (the op table's other row is the rest).
    launched = sum(o.self_cuda_ns for o in op_stats(trace) if o.name != UNLAUNCHED)
    assert gpu.total[0] == launched


def _load(tmp_path, events):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return load_trace(path)


def test_gpu_time_under_a_slice_drawn_on_an_extra_row_reaches_the_root(tmp_path):
    """C is held by B on B's own row (B partly overlaps A), so it is drawn on an extra row
    below its child C1: the sums go up the tree, not up the rows."""
    events = [_x("A", 0, 100), _x("A1", 10, 80), _x("B", 50, 100), _x("C", 60, 20),
              _x("C1", 65, 10), *_launch(66, 1, "k", 30)]  # fmt: skip
    trace = _load(tmp_path, events)
    gpu = call_tree(trace, weight="gpu")
    assert gpu.total[0] == 30 * US
    by_name = {gpu.label(n): int(gpu.total[n]) for n in range(1, len(gpu.parent))}
    ops = {o.name: o.cuda_total_ns for o in op_stats(trace)}
    shared = set(by_name) & set(ops)
    assert {"B", "C", "C1"} <= shared  # every op on the launch's path is in both
    assert all(by_name[n] == ops[n] for n in shared)


def test_children_overlapping_each_other_never_draw_past_the_width(tmp_path):
    from tui.model.present.icicle import icicle

    trace = _load(tmp_path, [_x("P", 0, 100), _x("A", 10, 60), _x("B", 50, 50), _x("C", 55, 40)])
    tree = call_tree(trace, weight="cpu")
    for row in icicle(tree, 0, 5, 80):
        assert all(0 <= s.x0 < s.x1 <= 80 for s in row)


def test_module_classes_merge_a_classs_instances(tmp_path):
    events = [
        _x("nn.Module: Net_0", 0, 100, "python_function"),
        _x("nn.Module: Linear_0", 10, 30, "python_function"),
        _x("nn.Module: Linear_1", 50, 40, "python_function"),
        _x("nn.Module: Linear_10", 95, 4, "python_function"),
    ]
    trace = _load(tmp_path, events)
    per_instance = call_tree(trace, weight="cpu", modules=True)
    assert len(per_instance.children(per_instance.children(0)[0])) == 3
    classes = call_tree(trace, weight="cpu", modules=True, by_class=True)
    (net,) = classes.children(0)
    (linear,) = classes.children(net)
    assert (classes.label(net), classes.label(linear)) == ("nn.Module: Net", "nn.Module: Linear")
    assert (classes.calls[linear], classes.total[linear]) == (3, 74 * US)
    assert classes.self_[net] == (100 - 74) * US
    text = run("summary", str(tmp_path / "t.json"), "--tree", "--view", "module classes").stdout
    line = next(x for x in text.splitlines() if x.endswith("nn.Module: Linear"))
    assert line.split()[:6] == ["74", "us", "74.0%", "74", "us", "3"]
