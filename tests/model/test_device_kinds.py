"""Device work beyond CUDA kernels, and calls that look like syncs but are not (hand-made)."""

from __future__ import annotations

import pytest

from tests.conftest import DATA, row_named
from tui.model.analysis.memory import counter_series
from tui.model.analysis.summary import summarize
from tui.model.analysis.syncs import sync_rows
from tui.model.ingest import load_trace
from tui.model.present.details import slice_details

US = 1000


@pytest.fixture(scope="module")
def trace():
    return load_trace(DATA / "device_kinds.json")


def test_mtia_events_and_profiler_ranges_are_device_work(trace):
    kinds = {trace.lane_of(row_named(trace, n)).kind for n in ("remote", "range 0")}
    assert kinds == {"gpu"}
    e = summarize(trace, (0, 130 * US)).verdict.evidence
    assert e.gpu_busy_ns == (40 + 20 + 4) * US  # remote, range 0, graph node
    launched = {trace.slice_name(int(d)) for d in trace.launches.dst}
    assert "remote" in launched
    details = dict(slice_details(trace, row_named(trace, "range 0")))
    assert details["  sm__throughput.avg.pct_of_peak_sustained_elapsed"] == "71.5"


def test_blocking_copies_are_syncs_and_stream_waits_are_not(trace):
    names = {trace.slice_name(int(r)) for r in sync_rows(trace)}
    assert names == {"hipMemcpyWithStream"}
    details = dict(slice_details(trace, row_named(trace, "cudaStreamWaitEvent")))
    assert "the CPU goes on" in details["stream wait"]


def test_graph_dependency_flows_are_not_launches(trace):
    node = row_named(trace, "graph node")
    assert node not in trace.launches.dst.tolist()
    assert node in trace.flows.dst.tolist()  # still a flow, followed with ] and [


def test_pm_sampling_counters_are_named_after_the_event(trace):
    series = {c.name: c.values.tolist() for c in counter_series(trace)}
    assert series["sm__cycles_active.avg"] == [42.0, 40.0]
