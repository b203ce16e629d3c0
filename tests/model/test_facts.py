"""Costs paid once: what `info` and `summary` derive from a whole trace (health, whether shapes
were recorded, the roofline's rows, how many pieces of GPU work each attribution rule placed,
every step's verdict, a window's verdict, a scope's op table, graph ids and captures, `info`'s
summary) is
kept beside the cached model as it is derived; a later
run reads it back equal to a fresh computation, a changed trace derives it again, loading
derives nothing ahead of need, and an entry without facts (as the build before them wrote),
with damaged facts or with facts of another version, derives them again cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import get_args

import pytest

from tests.model.test_health import EVENTS, _x
from tests.tui.helpers import ROOT, run
from tui.model.analysis import (
    attribution,
    collectives,
    graphs,
    ops,
    replay_work,
    roofline,
    summary,
    tensor_cores,
    verdict,
)
from tui.model.analysis import health as health_module
from tui.model.analysis.scope import Scope
from tui.model.analysis.steps import profiled_window
from tui.model.ingest import load_trace as load_without_facts
from tui.model.ingest.cache import ModelCache
from tui.model.passes import facts, facts_version, load_trace
from tui.model.present import info

MM = {"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}
SHAPED = [_x("aten::mm", 50, 5, **MM), _x("aten::mm", 60, 5, **MM), *EVENTS]


@pytest.fixture
def broken(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text(json.dumps({"traceEvents": SHAPED}))
    return path


@pytest.fixture
def counted(monkeypatch):
    """How often each fact was derived."""
    calls = {"health": 0, "shapes": 0, "rows": 0, "placed": 0, "steps": 0}
    health, shapes, rows = health_module._health, roofline._shapes_recorded, roofline._rows
    attribute, steps = attribution._attribute, summary._step_rows

    def counted_health(trace):
        calls["health"] += 1
        return health(trace)

    def counted_shapes(trace):
        calls["shapes"] += 1
        return shapes(trace)

    def counted_rows(trace):
        calls["rows"] += 1
        return rows(trace)

    def counted_attribute(trace):
        calls["placed"] += 1
        return attribute(trace)

    def counted_steps(trace):
        calls["steps"] += 1
        return steps(trace)

    monkeypatch.setattr(health_module, "_health", counted_health)
    monkeypatch.setattr(attribution, "_attribute", counted_attribute)
    monkeypatch.setattr(roofline, "_shapes_recorded", counted_shapes)
    monkeypatch.setattr(roofline, "_rows", counted_rows)
    monkeypatch.setattr(summary, "_step_rows", counted_steps)
    return calls


def _facts(trace):
    rows, call_rows, call_group = roofline.shape_rows(trace)
    return (
        health_module.health(trace),
        roofline.shapes_recorded(trace),
        (rows, call_rows.tolist(), call_group.tolist()),
        attribution.placed_by(trace),
        summary.step_rows(trace),
        verdict.judge(trace, *profiled_window(trace)),
        ops.op_stats(trace),
        ops.op_stats(trace, Scope(0, 60_000)),
        roofline.modelled_calls(trace),
        tensor_cores.has_matmul_kernels(trace),
        replay_work.captures(trace),
        collectives.collectives(trace),
        {**info.summary(trace), "path": None},  # the path is the load's, not the content's
    )


def _fresh(path):
    return _facts(load_without_facts(path))


def test_kept_facts_equal_a_fresh_computation(tmp_path, broken, counted):
    cache = ModelCache(tmp_path / "cache")
    _facts(load_trace(broken, cache=cache))
    assert counted == {"health": 1, "shapes": 1, "rows": 1, "placed": 1, "steps": 1}
    kept = _facts(load_trace(broken, cache=cache))
    assert counted == {"health": 1, "shapes": 1, "rows": 1, "placed": 1, "steps": 1}  # read back
    fresh = _fresh(broken)
    assert kept == fresh and fresh[0].checks and fresh[0].repairs and fresh[1] is True
    assert kept[0].line == fresh[0].line and fresh[2][0] and fresh[2][1]


def test_loading_derives_nothing_ahead_of_need(tmp_path, broken, counted):
    cache = ModelCache(tmp_path / "cache")
    load_trace(broken, cache=cache)
    roofline.shapes_recorded(load_trace(broken, cache=cache))  # what summary may ask
    assert counted == {"health": 0, "shapes": 1, "rows": 0, "placed": 0, "steps": 0}
    again = load_trace(broken, cache=cache)
    assert health_module.health(again) == _fresh(broken)[0]  # derived now, beside the kept one
    assert counted == {"health": 2, "shapes": 2, "rows": 1, "placed": 2, "steps": 1}
    roofline.shape_rows(load_trace(broken, cache=cache))
    assert _facts(load_trace(broken, cache=cache)) == _fresh(broken)
    # the fresh ones, and rows, steps and the placements' counts once (the rows place GPU work
    # too; health places work)
    assert counted == {"health": 3, "shapes": 3, "rows": 3, "placed": 5, "steps": 3}


def test_a_changed_trace_derives_its_facts_again(tmp_path, broken, counted):
    cache = ModelCache(tmp_path / "cache")
    _facts(load_trace(broken, cache=cache))
    plain = [e for e in SHAPED if "Input Dims" not in e.get("args", {})]
    broken.write_text(json.dumps({"traceEvents": plain[:2]}))
    changed = _facts(load_trace(broken, cache=cache))
    assert counted == {"health": 2, "shapes": 2, "rows": 2, "placed": 2, "steps": 2}
    assert changed == _fresh(broken) and changed[1] is False and not changed[2][0]


@pytest.mark.parametrize(
    "kept",
    [
        "none",
        "damaged",
        "other version",
        "wrong shape",
        "a count not a number",
        "no rule",
        "an op's calls not a number",
        "an info field missing",
        "an info count not a number",
        "an info rule unknown",
    ],
)
def test_an_entry_whose_facts_cannot_be_used_derives_them_again(tmp_path, broken, kept):
    cache = ModelCache(tmp_path / "cache")
    if kept == "none":  # the model as the build before facts cached it
        load_without_facts(broken, cache=cache)
    else:
        _facts(load_trace(broken, cache=cache))
        (side,) = (tmp_path / "cache").glob("*.facts.json")
        stored = json.loads(side.read_text())
        if kept == "damaged":
            side.write_text(side.read_text()[:20])
        elif kept == "other version":
            another = f"{facts_version.SHAPE}-another build"
            side.write_text(json.dumps({**stored, "version": another}))
        else:
            placed = stored["facts"]["gpu work placed by"]
            if kept == "wrong shape":
                stored["facts"]["health"]["checks"][0]["count"] = "many"
            elif kept == "a count not a number":
                placed["none"] = "many"
            elif kept == "an info field missing":
                del stored["facts"]["info"]["lanes"]
            elif kept == "an info count not a number":
                stored["facts"]["info"]["slices"] = "many"
            elif kept == "an info rule unknown":
                stored["facts"]["info"]["gpu_work_placed_by"]["bogus"] = 3
            elif kept == "an op's calls not a number":
                for rows in stored["facts"]["op stats"].values():
                    rows[0]["calls"] = "many"
            else:
                del placed["launch_call"]
            side.write_text(json.dumps(stored))
    assert _facts(load_trace(broken, cache=cache)) == _fresh(broken)
    (side,) = (tmp_path / "cache").glob("*.facts.json")
    stored = json.loads(side.read_text())
    # every fact but the graph ids: this trace replays no graph (test below)
    assert stored["version"] == facts.VERSION
    assert set(stored["facts"]) == set(facts.FACTS) - {"graph ids"}


def test_info_on_a_cached_trace_runs_no_health_check(tmp_path, broken, counted, monkeypatch):
    """Nor places GPU work on ops again (the op tree over every slice)."""
    monkeypatch.setenv("TRACE_TUI_CACHE_DIR", str(tmp_path / "cache"))
    first = run("info", "--json", str(broken))
    assert first.returncode == 0 and counted["health"] == counted["placed"] == 1
    second = run("info", "--json", str(broken))
    assert second.returncode == 0 and counted["health"] == counted["placed"] == 1
    assert second.stdout == first.stdout
    assert json.loads(second.stdout)["health"]["checks"]
    without = run("info", "--json", "--no-cache", str(broken))
    assert without.stdout == first.stdout and counted["health"] == counted["placed"] == 2


def test_info_on_a_cached_trace_loads_no_model(tmp_path, broken, monkeypatch):
    """It prints the summary kept beside the cached model, as a load would print it, with
    neither numpy nor an analysis imported (those imports were most of its time)."""
    monkeypatch.setenv("TRACE_TUI_CACHE_DIR", str(tmp_path / "cache"))
    spelled = f"{tmp_path}/./{broken.name}"  # printed as the load prints it: tidied
    outputs = ([], ["--json"])
    loaded = [run("info", *flags, "--no-cache", spelled).stdout for flags in outputs]
    assert run("info", str(broken)).stdout == loaded[0].replace("/./", "/")  # and kept
    modules = ("numpy", "tui.model.trace", "tui.model.analysis.health", "tui.model.ingest.load")
    code = (
        "import sys; from tui.cli import main; main(sys.argv[1:]); "
        f"print([m for m in {modules} if m in sys.modules], file=sys.stderr)"
    )
    (entry,) = (tmp_path / "cache").glob("*.model")
    os.utime(entry, (0, 0))
    for flags, expected in zip(outputs, loaded, strict=True):
        done = subprocess.run(
            [sys.executable, "-c", code, "info", *flags, spelled],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert (done.stdout, done.stderr) == (expected, "[]\n")
    assert entry.stat().st_mtime > 0  # used: evicted last, as a load marks it


@pytest.mark.parametrize("damage", ["span_ns", "kind"])
def test_a_kept_summary_not_of_its_shape_is_not_shown(tmp_path, broken, monkeypatch, damage):
    """A facts file is data a hand may edit: what `info` cannot print is derived again."""
    monkeypatch.setenv("TRACE_TUI_CACHE_DIR", str(tmp_path / "cache"))
    loaded = run("info", "--no-cache", str(broken)).stdout
    run("info", str(broken))
    (side,) = (tmp_path / "cache").glob("*.facts.json")
    stored = json.loads(side.read_text())
    if damage == "span_ns":
        stored["facts"]["info"]["span_ns"] = None
    else:
        del stored["facts"]["info"]["lanes"][0]["kind"]
    side.write_text(json.dumps(stored))
    done = run("info", str(broken))
    assert (done.returncode, done.stdout) == (0, loaded)
    assert run("info", str(broken)).stdout == loaded  # kept whole again


def test_values_json_cannot_hold_print_the_same_from_the_cache(tmp_path, monkeypatch):
    """A device property or a pid past 64 bits (orjson refuses them), or infinite (written as
    null): the summary is still kept, and read back the same."""
    monkeypatch.setenv("TRACE_TUI_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "odd.json"
    device = '{"id": 0, "name": 1e400, "totalGlobalMem": 123456789012345678901234567890}'
    events = [*SHAPED, {"ph": "X", "name": "x", "pid": 10**30, "tid": 1, "ts": 1, "dur": 1}]
    path.write_text(f'{{"deviceProperties": [{device}], "traceEvents": {json.dumps(events)}}}')
    for flags in ([], ["--json"]):
        outputs = [run("info", *flags, *extra, str(path)) for extra in (["--no-cache"], [], [])]
        assert {(o.returncode, o.stdout) for o in outputs} == {(0, outputs[0].stdout)}
    assert "devices    inf" in outputs[0].stdout or '"name": "inf"' in outputs[0].stdout
    assert '"totalGlobalMem": "123456789012345678901234567890"' in outputs[0].stdout
    assert f'"pid": "{10**30}"' in outputs[0].stdout
    (kept,) = (tmp_path / "cache").glob("*.facts.json")
    assert info.KEY in json.loads(kept.read_text())["facts"]


def test_summary_on_a_cached_trace_reads_no_args_again(tmp_path, broken, counted, monkeypatch):
    monkeypatch.setenv("TRACE_TUI_CACHE_DIR", str(tmp_path / "cache"))
    for flags in ([], ["--roofline", "--format", "json"]):
        first = run("summary", *flags, str(broken))
        again = run("summary", *flags, str(broken))
        assert first.returncode == 0 and again.stdout == first.stdout
    # rows found: shapes were recorded; the op table places GPU work on each run; the steps
    # are judged once
    assert counted == {"health": 0, "shapes": 0, "rows": 1, "placed": 4, "steps": 1}


def test_step_verdicts_read_back_equal(tmp_path, counted):
    from tests.model.test_diff import step_trace

    path = tmp_path / "steps.json"
    step_trace(path, [("k_add", 10.0), ("k_mul", 30.0)], steps=5)
    cache = ModelCache(tmp_path / "cache")
    first = summary.step_rows(load_trace(path, cache=cache))
    kept = summary.step_rows(load_trace(path, cache=cache))
    assert counted["steps"] == 1 and len(kept) == 5 and kept == first
    assert kept == summary.step_rows(load_without_facts(path))
    assert kept[0].verdict.evidence.launches and kept[0].verdict.reason == first[0].verdict.reason


def test_a_kept_fact_is_read_back_only_when_asked_for(tmp_path, monkeypatch):
    """`info` shows no step verdicts: a cached `info` decodes none of them."""
    from msgspec.structs import replace

    from tests.model.test_diff import step_trace

    path = tmp_path / "steps.json"
    step_trace(path, [("k_add", 10.0)], steps=5)
    cache = ModelCache(tmp_path / "cache")
    first = summary.step_rows(load_trace(path, cache=cache))
    reads = []
    kept = facts.FACTS["step rows"]
    counted = replace(kept, read=lambda data: reads.append(1) or kept.read(data))
    monkeypatch.setitem(facts.FACTS, "step rows", counted)
    trace = load_trace(path, cache=cache)
    assert reads == []
    assert summary.step_rows(trace) == first and summary.step_rows(trace) == first
    assert reads == [1]


def test_a_windows_verdict_and_a_scopes_op_table_are_read_back(tmp_path, broken, monkeypatch):
    cache = ModelCache(tmp_path / "cache")
    first = _facts(load_trace(broken, cache=cache))

    def derived_again(*_args, **_kwargs):
        raise AssertionError("derived again, not read back")

    monkeypatch.setattr(ops, "_op_stats", derived_again)
    monkeypatch.setattr(verdict, "_verdict", derived_again)
    kept = _facts(load_trace(broken, cache=cache))
    assert kept[5:] == first[5:] and kept[6] and kept[5].evidence.wall_ns


def test_each_fact_keeps_the_slot_its_analysis_names():
    """facts.py names the slots itself (importing the analyses would slow every start)."""
    keys = {
        "health": health_module.KEY,
        "shapes recorded": roofline.SHAPES_KEY,
        "modelled calls": roofline.CALLS_KEY,
        "matmul kernels": tensor_cores.MATMUL_KEY,
        "roofline rows": roofline.ROWS_KEY,
        "gpu work placed by": attribution.PLACED_KEY,
        "step rows": summary.STEPS_KEY,
        "verdicts": verdict.KEY,
        "op stats": ops.KEY,
        "graph captures": replay_work.CAPTURES_KEY,
        "graph ids": graphs.GRAPH_IDS_KEY,
        "collectives": collectives.KEY,
        "info": info.KEY,
    }
    assert {name: fact.slot for name, fact in facts.FACTS.items()} == keys


def test_the_kept_info_summary_knows_every_attribution_rule():
    """present/info.py names the rules itself (importing attribution would slow a cached
    `info`): a new rule must be named there too, or kept summaries would be refused."""
    assert get_args(info._Rule) == attribution.RULES == tuple(info._PLACED_BY)


def test_graph_captures_read_back_without_decoding_the_launches_args(tmp_path, monkeypatch):
    from tests.model.test_replay_work import _capture, _replays, _write

    events = _capture() + _replays(1000)
    for e in events:  # HIP's launches name their kernels
        if e["name"] == "cudaLaunchKernel":
            e["args"]["kernel"] = "gemm_kernel" if e["ts"] == 3 else "relu_kernel"
    path = _write(tmp_path / "t.json", events)
    cache = ModelCache(tmp_path / "cache")
    first = replay_work.captures(load_trace(path, cache=cache))
    assert [c.kernels for c in first] == [["gemm_kernel", "relu_kernel"]]

    def no_args(trace, launch):
        raise AssertionError("a launch's args decoded again")

    monkeypatch.setattr(replay_work, "_kernel_named", no_args)
    assert replay_work.captures(load_trace(path, cache=cache)) == first


def test_graph_ids_read_back_without_decoding_the_kernels_args(tmp_path, monkeypatch):
    from tests.model.test_replay_work import _replays, _write

    events = _replays(1000, n=2)
    for e in events:
        if e["cat"] == "kernel":
            e["args"]["graph id"] = 7
    path = _write(tmp_path / "t.json", events)
    cache = ModelCache(tmp_path / "cache")
    first = graphs.graphs(load_trace(path, cache=cache))
    assert [g.label for g in first.graphs] == ["graph 7"]

    def no_args(trace, row):
        raise AssertionError("a kernel's args decoded again")

    monkeypatch.setattr(graphs, "_graph_id", no_args)
    again = graphs.graphs(load_trace(path, cache=cache))
    assert [g.label for g in again.graphs] == ["graph 7"] and len(again.replays) == 2


def test_a_graph_id_json_cannot_hold_is_no_id_and_the_cached_run_goes_on(tmp_path):
    from tests.model.test_replay_work import _replays, _write

    events = _replays(1000)
    for e in events:
        if e["cat"] == "kernel":
            e["args"]["graph id"] = 10**30  # beyond int64: orjson cannot write it
    path = _write(tmp_path / "t.json", events)
    cache = ModelCache(tmp_path / "cache")
    for _ in range(2):  # written, then read back
        found = graphs.graphs(load_trace(path, cache=cache))
        assert [g.label for g in found.graphs] == ["graph #1"] and len(found.replays) == 2


def test_collectives_read_back_without_decoding_the_kernels_args(tmp_path, monkeypatch):
    """A rank pass over cached ranks reads no args: what each collective is comes back."""
    from tests.model.test_communication import _step, _write

    doc = _step("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", op="record_param_comms")
    comm = doc["traceEvents"][-1]
    comm["args"] |= {
        "Collective name": "allreduce",
        "Process Group Name": "0",
        "Seq": 3,
        "In msg nelems": 1024,
        "Out msg nelems": 1024,
        "dtype": "Float",
        "Group size": 2,
    }
    path = _write(tmp_path / "t.json", doc)
    cache = ModelCache(tmp_path / "cache")
    first = collectives.collectives(load_trace(path, cache=cache))
    assert [(c.kind, c.group, c.seq, c.bytes, c.group_size) for c in first] == [
        ("allreduce", "0", 3, 4096, 2)
    ]

    def no_args(trace, kernel, launch):
        raise AssertionError("a collective's args decoded again")

    monkeypatch.setattr(collectives, "_described", no_args)
    assert collectives.collectives(load_trace(path, cache=cache)) == first


@pytest.mark.parametrize("odd", [10**30, True])
def test_a_collective_number_json_or_int64_cannot_hold_is_left_out(tmp_path, odd):
    """A Seq beyond int64 would stop every fact of the trace being kept (orjson cannot write
    it); a bool is no number."""
    from tests.model.test_communication import _step, _write

    doc = _step("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", op="record_param_comms")
    doc["traceEvents"][-1]["args"] |= {"Collective name": "allreduce", "Seq": odd}
    path = _write(tmp_path / "t.json", doc)
    cache = ModelCache(tmp_path / "cache")
    first = collectives.collectives(load_trace(path, cache=cache))
    assert [(c.kind, c.seq) for c in first] == [("allreduce", None)]
    health_module.health(load_trace(path, cache=cache))
    (side,) = (tmp_path / "cache").glob("*.facts.json")
    assert {"collectives", "health"} <= set(json.loads(side.read_text())["facts"])


def test_a_fact_json_cannot_hold_is_not_kept_and_the_analysis_goes_on():
    """A value the facts file cannot hold (a numpy number in a record) is derived again next
    time: it neither stops the analysis that set it nor the other facts being kept."""
    import numpy as np

    from tui.model.analysis.collectives import Collective

    saved = []
    slots = facts._Keeping({}, {}, saved.append)
    odd = [Collective("allreduce", "", None, np.int64(5), 1, None, None)]
    slots["collectives"] = odd
    slots["shapes recorded"] = True
    assert slots["collectives"] is odd
    assert saved and all("collectives" not in kept for kept in saved)
    assert saved[-1] == {"shapes recorded": True}
