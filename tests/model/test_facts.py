"""Costs paid once: what `info` and `summary` derive from a whole trace (health, whether shapes
were recorded) is derived when the model is cached and kept beside it; a later run reads it
back equal to a fresh computation, a changed trace derives it again, and an entry without facts
(as the build before them wrote), with damaged facts or with facts of another version, derives
them again cleanly."""

from __future__ import annotations

import json

import pytest

from tests.model.test_health import EVENTS, _x
from tests.tui.helpers import run
from tui.model.analysis import health as health_module
from tui.model.analysis import roofline
from tui.model.ingest import load_trace as load_without_facts
from tui.model.ingest.cache import ModelCache
from tui.model.passes import facts, load_trace

SHAPED = [_x("aten::mm", 50, 5, **{"Input Dims": [[2, 3], [3, 4]]}), *EVENTS]


@pytest.fixture
def broken(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text(json.dumps({"traceEvents": SHAPED}))
    return path


@pytest.fixture
def counted(monkeypatch):
    """How often each fact was derived."""
    calls = {"health": 0, "shapes": 0}
    health, shapes = health_module._health, roofline._shapes_recorded

    def counted_health(trace):
        calls["health"] += 1
        return health(trace)

    def counted_shapes(trace):
        calls["shapes"] += 1
        return shapes(trace)

    monkeypatch.setattr(health_module, "_health", counted_health)
    monkeypatch.setattr(roofline, "_shapes_recorded", counted_shapes)
    return calls


def _fresh(path):
    trace = load_without_facts(path)
    return health_module.health(trace), roofline.shapes_recorded(trace)


def test_kept_facts_equal_a_fresh_computation(tmp_path, broken, counted):
    cache = ModelCache(tmp_path / "cache")
    load_trace(broken, cache=cache)
    assert counted == {"health": 1, "shapes": 1}  # derived once, as the entry was written
    again = load_trace(broken, cache=cache)
    kept = (health_module.health(again), roofline.shapes_recorded(again))
    assert counted == {"health": 1, "shapes": 1}  # read back, not derived
    fresh = _fresh(broken)
    assert kept == fresh and fresh[0].checks and fresh[0].repairs and fresh[1] is True
    assert kept[0].line == fresh[0].line


def test_a_changed_trace_derives_its_facts_again(tmp_path, broken, counted):
    cache = ModelCache(tmp_path / "cache")
    load_trace(broken, cache=cache)
    plain = [e for e in SHAPED if "Input Dims" not in e.get("args", {})]
    broken.write_text(json.dumps({"traceEvents": plain[:2]}))
    changed = load_trace(broken, cache=cache)
    assert counted == {"health": 2, "shapes": 2}
    assert (health_module.health(changed), roofline.shapes_recorded(changed)) == _fresh(broken)
    assert roofline.shapes_recorded(changed) is False


@pytest.mark.parametrize("kept", ["none", "damaged", "other version", "wrong shape"])
def test_an_entry_whose_facts_cannot_be_used_derives_them_again(tmp_path, broken, kept):
    cache = ModelCache(tmp_path / "cache")
    if kept == "none":  # the model as the build before facts cached it
        load_without_facts(broken, cache=cache)
    else:
        load_trace(broken, cache=cache)
        (side,) = (tmp_path / "cache").glob("*.facts.json")
        stored = json.loads(side.read_text())
        if kept == "damaged":
            side.write_text(side.read_text()[:20])
        elif kept == "other version":
            side.write_text(json.dumps({**stored, "version": facts.VERSION + 1}))
        else:
            stored["facts"]["health"]["checks"][0]["count"] = "many"
            side.write_text(json.dumps(stored))
    again = load_trace(broken, cache=cache)
    assert (health_module.health(again), roofline.shapes_recorded(again)) == _fresh(broken)
    (side,) = (tmp_path / "cache").glob("*.facts.json")
    assert json.loads(side.read_text())["version"] == facts.VERSION  # kept for the next run


def test_info_on_a_cached_trace_runs_no_health_check(tmp_path, broken, counted, monkeypatch):
    monkeypatch.setenv("TRACE_TUI_CACHE_DIR", str(tmp_path / "cache"))
    first = run("info", "--json", str(broken))
    assert first.returncode == 0 and counted["health"] == 1
    second = run("info", "--json", str(broken))
    assert second.returncode == 0 and counted["health"] == 1
    assert second.stdout == first.stdout
    assert json.loads(second.stdout)["health"]["checks"]
    without = run("info", "--json", "--no-cache", str(broken))
    assert without.stdout == first.stdout and counted["health"] == 2
