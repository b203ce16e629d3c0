"""The collector paused while a trace is read, and as it was afterwards, however the pauses of
two loads overlap."""

from __future__ import annotations

import gc

import pytest

from tests.conftest import DATA
from tui.model.errors import TraceError
from tui.model.ingest.gc_pause import _Pauses
from tui.model.ingest.load import load_trace


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_overlapping_pauses_end_with_the_collector_on(collector_on):
    pauses = _Pauses()
    first, second = pauses.paused(), pauses.paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first load ends while the second reads on
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_collector_the_program_turned_off_stays_off(collector_on):
    gc.disable()
    with _Pauses().paused():
        pass
    assert not gc.isenabled()


def test_a_load_pauses_it_and_gives_it_back_even_when_the_file_is_bad(collector_on, tmp_path):
    seen = []
    load_trace(DATA / "gpu_streams.json", progress=lambda *_: seen.append(gc.isenabled()))
    assert seen and not any(seen)
    assert gc.isenabled()
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TraceError, match=r"bad\.json"):
        load_trace(bad)
    assert gc.isenabled()
