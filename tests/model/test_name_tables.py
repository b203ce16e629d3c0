"""Trace.name_test: a table of a test over the names, whole or read for some slices only."""

from __future__ import annotations

import numpy as np

from tests.conftest import DATA
from tui.model.ingest import load_trace


def test_a_table_among_some_names_agrees_with_the_whole_one_where_it_is_read():
    trace = load_trace(DATA / "gpu_streams.json")
    s = trace.slices
    test = lambda n: "a" in n.lower()  # noqa: E731
    whole = trace.name_test(test)
    assert len(whole) == len(trace.names) + 1 and not whole[-1]
    gpu = np.flatnonzero(trace.kind_mask("gpu"))
    among = np.concatenate([s.name[gpu], [-1]])  # -1: a slice with no name
    part = trace.name_test(test, among)
    assert part.shape == whole.shape and not part[-1]
    assert np.array_equal(part[among], whole[among])
    untested = np.setdiff1d(np.arange(len(trace.names)), among)
    assert len(untested) and not part[untested].any() and whole[untested].any()
