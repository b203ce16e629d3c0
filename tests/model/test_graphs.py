"""CUDA graph replays on a hand-made trace with known answers: two graphs (one replayed twice),
eager work beside them, a dependency flow between graph nodes; then Kineto's `graph id`, the
op and kernel tables, the summary line, `summary --graphs`, the details, and `]`/`[` in the
viewer; and the shared vLLM decode, whose one hipGraphLaunch runs 421 kernels."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_model
from tests.tui.helpers import loaded, run
from tui.model.analysis.graphs import graphs, nodes
from tui.model.analysis.ops import op_rows, op_stats
from tui.model.analysis.summary import summarize
from tui.model.ingest import load_trace
from tui.model.present.details import slice_details
from tui.model.present.tables import scope_report
from tui.widgets.timeline import Timeline

US = 1000
CPU = {"pid": 1, "tid": 1}
GPU = {"pid": 0, "tid": 7}
DEPENDENCY = (1 << 40) + 5  # torch 2.14's flow ids for edges between graph nodes


def _events(graph_ids: bool) -> list[dict]:
    def launch(name, ts, corr, kernels, graph):
        out = [{"ph": "X", "cat": "cuda_runtime", "name": name, **CPU, "ts": ts, "dur": 8,
                "args": {"correlation": corr}}]  # fmt: skip
        at = ts + 20
        for node, (kernel, dur) in enumerate(kernels):
            args = {"correlation": corr}
            if graph_ids and graph is not None:
                args |= {"graph id": graph, "graph node id": 100 * graph + node + 1}
                # What torch.cuda._annotate_cuda_graph_trace merges from mark_kernels scopes.
                args |= {"annotation": f"phase_{graph}", "module": "decoder.layers.0"}
            out.append({"ph": "X", "cat": "kernel", "name": kernel, **GPU, "ts": at, "dur": dur,
                        "args": args})  # fmt: skip
            at += dur
        return out

    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", **CPU, "ts": 0,
         "dur": 1000},
        {"ph": "X", "cat": "cpu_op", "name": "aten::eager", **CPU, "ts": 10, "dur": 20},
    ]  # fmt: skip
    events += launch("cudaLaunchKernel", 12, 1, [("eager_k", 50)], None)
    events += launch("cudaGraphLaunch", 100, 2, [("gA1", 10), ("gA2", 20), ("gA1", 5)], 1)
    events += launch("cudaGraphLaunch", 400, 3, [("gA1", 12), ("gA2", 22), ("gA1", 6)], 1)
    events += launch("cudaGraphLaunch", 700, 4, [("gB", 100)], 2)
    # An edge from the first replay's gA1 to its gA2: a flow, not a launch.
    events += [
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": DEPENDENCY, **GPU, "ts": 121},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": DEPENDENCY, **GPU, "ts": 130, "bp": "e"},
    ]
    return events


@pytest.fixture(scope="module", params=[False, True], ids=["by-kernels", "graph-id"])
def trace(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("graphs") / "t.json"
    path.write_text(json.dumps({"traceEvents": _events(graph_ids=request.param)}))
    return load_trace(path)


def test_replays_are_grouped_into_graphs(trace):
    found = graphs(trace)
    assert len(found.replays) == 3 and found.gpu_ns == 225 * US
    b, a = found.graphs  # most GPU time first
    ids = trace.args(int(found.replays[0].work[0])).get("graph id") is not None
    assert (a.label, b.label) == (("graph 1", "graph 2") if ids else ("graph #1", "graph #2"))
    assert (a.calls, a.kernels, a.gpu_ns, a.launch_cpu_ns) == (2, 3, 75 * US, 16 * US)
    assert (b.calls, b.kernels, b.gpu_ns) == (1, 1, 100 * US)
    assert found.share(b) == pytest.approx(100 / 225)
    # Per node across replays: the second gA1 of each replay is a node of its own.
    got = [(n.name, n.calls, n.total_ns // US, n.min_ns // US, n.max_ns // US) for n in
           nodes(trace, found, 1)]  # fmt: skip
    assert got == [("gA1", 2, 22, 10, 12), ("gA2", 2, 42, 20, 22), ("gA1", 2, 11, 5, 6)]
    assert [n.node_id for n in nodes(trace, found, 1)] == (
        ["101", "102", "103"] if ids else ["", "", ""]
    )
    # The dependency edge did not make gA2 a launch of gA1: it is the graph launch's.
    second = int(found.replays[0].work[1])
    assert trace.slice_name(second) == "gA2" and second in trace.flows.dst.tolist()


def test_the_op_table_gets_a_row_per_graph_outside_torchs_totals(trace):
    rows = {o.name: o for o in op_stats(trace)}
    label = graphs(trace).graphs[1].label
    a = rows[f"[{label}] cudaGraphLaunch: 3 kernels"]
    assert (a.calls, a.self_cpu_ns, a.cpu_total_ns, a.self_cuda_ns, a.cuda_total_ns) == (
        2, 0, 16 * US, 0, 75 * US,
    )  # fmt: skip
    # Its least and most replay (the by-shape table shows them).
    assert (a.cpu_min_ns, a.cpu_max_ns, a.cuda_min_ns, a.cuda_max_ns) == (
        8 * US, 8 * US, 35 * US, 40 * US,
    )  # fmt: skip
    assert f"[{graphs(trace).graphs[0].label}] cudaGraphLaunch: 1 kernel" in rows
    report = scope_report(trace)
    assert report.totals.self_cuda_ns == 225 * US  # every kernel counted once
    assert len(op_rows(trace, a.name)) == 2  # enter goes to its launches
    kernels = {k.name: k for k in scope_report(trace, kernels=True).rows}
    assert kernels["gA1"].graphs == (label,) and kernels["eager_k"].graphs == ()
    assert "Graph" in [c.header for c in scope_report(trace, kernels=True).columns]


def test_the_summary_says_how_much_ran_in_graphs(trace):
    lines = summarize(trace).graphs
    assert [(g.replays, g.kernels, g.gpu_ns // US) for g in lines] == [(1, 1, 100), (2, 3, 75)]
    assert sum(g.share for g in lines) == pytest.approx(175 / 225)
    text = run("summary", trace.path, "--top", "1").stdout
    line = next(x for x in text.splitlines() if x.startswith("CUDA graphs"))
    assert line.split(None, 2)[2].startswith("78% of all GPU work ran in 3 replays: ")
    assert "1 replay of 1 kernel, 100 us (44%)" in line
    doc = json.loads(run("summary", trace.path, "--format", "json").stdout)
    assert [g["replays"] for g in doc["graphs"]] == [1, 2]
    graphs_doc = json.loads(run("summary", trace.path, "--graphs", "--format", "json").stdout)
    second = graphs_doc["graphs"][1]
    # Most time first, each with its place in the replay.
    assert [(n["name"], n["node"]) for n in second["nodes"]] == [("gA2", 2), ("gA1", 1), ("gA1", 3)]
    assert second["nodes"][0]["calls"] == 2 and second["launch_cpu_ns"] == 16 * US
    text = run("summary", trace.path, "--graphs").stdout
    assert "2 graphs, 3 replays: 175 us of GPU work, 78% of all" in text


def test_details_place_a_kernel_in_its_replay(trace):
    found = graphs(trace)
    replay = found.replays[1]
    kernel = dict(slice_details(trace, int(replay.work[2])))
    assert kernel["graph"].endswith("replay 2 of 2: kernel 3 of 3 ([ goes to the launch)")
    if "  graph id" in kernel:  # the annotations merged into the kernel's args are shown
        assert (kernel["  annotation"], kernel["  module"]) == ("phase_1", "decoder.layers.0")
    launch = dict(slice_details(trace, replay.launch))
    assert "replay 2 of 2: 3 kernels, 40 us of GPU work" in launch["graph replay"]


async def test_square_brackets_go_from_a_launch_to_its_kernels_and_back(trace):
    found = graphs(trace)
    replay = found.replays[0]
    async with loaded(trace.path, (120, 30)) as (pilot, app):
        timeline = app.query_one(Timeline)
        timeline.select(replay.launch)
        await pilot.press("right_square_bracket")
        assert timeline.selected == int(replay.work[0])
        assert timeline.matches.tolist() == replay.work.tolist()
        await pilot.press("n")
        assert timeline.selected == int(replay.work[1])
        await pilot.press("left_square_bracket")
        assert timeline.selected == replay.launch


def test_the_shared_vllm_decode_is_one_replay_of_421_kernels(shared):
    trace = shared_model(shared / "tracelens" / "mi300_vllm_graph_execution_full.json.gz")
    found = graphs(trace)
    (graph,) = found.graphs
    assert (graph.calls, graph.kernels) == (1, 421)
    assert found.share(graph) > 0.95
    row = next(o for o in op_stats(trace) if o.name.startswith("[graph #1] hipGraphLaunch"))
    assert row.cuda_total_ns == graph.gpu_ns


def test_a_replays_kernels_are_short_only_if_all_of_them_are(trace):
    """A 5 us kernel of a 35 us replay bought by an 8 us launch is no launch overhead."""
    assert summarize(trace).verdict.evidence.short_work_share == 0.0


def test_the_graph_column_says_when_only_some_calls_ran_in_a_graph():
    from tui.model.analysis.kernels import KernelStat
    from tui.model.present.tables import KERNELS

    def stat(name, graphs, graphed, calls):
        return KernelStat(name, calls, 1, 1, 1, 0.0, {}, graphs=graphs, graphed=graphed)

    rows = [stat("eager", (), 0, 3), stat("some", ("graph #2",), 6, 242),
            stat("all", ("graph #1", "graph #3"), 5, 5)]  # fmt: skip
    column = KERNELS.column("graph")
    assert [column.text(r, None) for r in rows] == ["", "graph #2 (6 of 242)", "graph #1 +1"]
    assert [r.name for r in KERNELS.sort(rows, "graph")] == ["all", "some", "eager"]
