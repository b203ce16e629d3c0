"""Hostile input: the hand-made corpus in tests/data/bad, with the exact outcome of each file,
and property tests that any bytes give a model or the one error type, never anything else."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import DATA, SHARED, shared_traces
from tests.tui.helpers import run
from tui.model.errors import TraceError
from tui.model.ingest import load_trace

BAD = DATA / "bad"
EXPECTED = json.loads((BAD / "EXPECTED.json").read_text())
ROOT = Path(__file__).resolve().parents[2]
# TRACE_TUI_FUZZ_EXAMPLES=5000 runs a long fuzzing session; CI keeps it short.
EXAMPLES = int(os.environ.get("TRACE_TUI_FUZZ_EXAMPLES", "60"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_hostile_file_has_its_exact_outcome(name):
    want = EXPECTED[name]
    path = BAD / name
    if "error" in want:
        with pytest.raises(TraceError) as info:
            load_trace(path)
        assert want["error"] in str(info.value)
        assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)
        done = subprocess.run(
            [sys.executable, "-m", "tui", "info", str(path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1 and done.stderr.count("\n") == 1
        assert "Traceback" not in done.stderr
    else:
        trace = load_trace(path)
        assert len(trace.slices) == want["slices"]
        assert dict(trace.skipped) == want["skipped"]
        for row in range(len(trace.slices)):
            trace.args(row)  # lazily decoded args never raise
        for command in (["info", "--json"], ["summary", "--format", "json"]):
            done = run(*command, str(path))
            assert (done.returncode, done.stderr) == (0, ""), command
            assert json.loads(done.stdout), command


def test_args_too_deep_for_the_details_are_reported_not_raised(tmp_path):
    # 900 levels decode in the loader but not in the stdlib's args decoder (its limit is lower
    # under pytest's own stack): the details say so instead of failing.
    path = tmp_path / "deep.json"
    path.write_text(
        '[{"ph": "X", "name": "d", "pid": 1, "tid": 1, "ts": 0, "dur": 1, "args": '
        '{"a": ' + "[" * 900 + "]" * 900 + "}}]"
    )
    trace = load_trace(path)
    assert len(trace.slices) == 1
    value = trace.args(0)
    assert isinstance(value, dict) or "too deeply nested" in value


@st.composite
def hostile_event(draw):
    weird = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True),
        st.text(max_size=20),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    )
    event = {
        "ph": draw(st.one_of(st.sampled_from([*"XBEiICMstfbeSFnP", "", "XX"]), weird)),
        "name": draw(st.one_of(st.text(max_size=30), weird)),
        "pid": draw(st.one_of(st.integers(-5, 5), st.sampled_from(["Spans", "1"]), weird)),
        "tid": draw(st.one_of(st.integers(-5, 5), st.sampled_from(["stream 7", "2"]), weird)),
        "ts": draw(st.one_of(st.floats(-1e18, 1e18), st.integers(0, 10**6), weird)),
        "dur": draw(st.one_of(st.floats(-10, 1e6), weird)),
    }
    for key in draw(
        st.sets(st.sampled_from(["id", "bp", "s", "cat", "args", "bind_id", "flow_in", "flow_out"]))
    ):
        event[key] = draw(st.one_of(weird, st.sampled_from(["e", "g", "p", "ac2g", "t"])))
    if draw(st.booleans()):
        event.pop(draw(st.sampled_from(sorted(event))), None)
    return event


def _load_or_error(path):
    try:
        trace = load_trace(path)
    except TraceError as e:
        assert str(e).startswith(str(path)) and "\n" not in str(e)
        return None
    for row in range(min(len(trace.slices), 20)):
        trace.args(row)
    return trace


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(hostile_event(), max_size=25), st.sampled_from(["array", "object", "cut"]))
def test_generated_hostile_traces_load_or_fail_cleanly(tmp_path, events, form):
    text = json.dumps(events if form != "object" else {"traceEvents": events})
    if form == "cut":
        text = text[: len(text) * 2 // 3]
    path = tmp_path / "fuzz.json"
    path.write_text(text)
    _load_or_error(path)


SMALL_REAL = [p for p in shared_traces() if p.stat().st_size < 60_000]


@pytest.mark.skipif(not SMALL_REAL, reason=f"real traces not present: {SHARED} is missing")
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.integers(0, 10**9), st.sampled_from(["flip", "cut", "splice"]))
def test_mutated_real_traces_load_or_fail_cleanly(tmp_path, seed, how):
    rng = random.Random(seed)
    source = rng.choice(SMALL_REAL)
    data = bytearray(source.read_bytes())
    if data[:2] == b"\x1f\x8b" and rng.random() < 0.7:
        import gzip

        data = bytearray(gzip.decompress(bytes(data)))
    if how == "flip":
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif how == "cut":
        del data[rng.randrange(len(data)) :]
    else:
        a, b = sorted(rng.randrange(len(data)) for _ in range(2))
        data[a:a] = data[b : b + rng.randint(1, 200)]
    path = tmp_path / "mutated.json"
    path.write_bytes(bytes(data))
    _load_or_error(path)
