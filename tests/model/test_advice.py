"""The recommendations, on hand-made traces whose causes and savings are known."""

from __future__ import annotations

import json

from tests.conftest import DATA
from tests.model.test_stats_verdict import _trace
from tests.tui.helpers import run
from tui.model.analysis.advice import MIN_SAVING, advise
from tui.model.analysis.summary import summarize
from tui.model.analysis.verdict import SHORT_KERNELS
from tui.model.ingest import load_trace

US = 1000


def _rules(path):
    return {r.rule: r for r in advise(summarize(load_trace(path)))}


def test_the_dataloader_covering_the_idle_time_is_the_first_step():
    """One step [0, 100) us; the DataLoader covers 70 us of the GPU's 83 us idle."""
    found = advise(summarize(load_trace(DATA / "dataloader_bound.json")))
    assert found[0].rule == "data-loading"
    assert (found[0].bound_ns, found[0].per_step_ns) == (70 * US, 70 * US)
    assert "num_workers" in found[0].change and "70 us" in found[0].evidence


def test_a_sync_covering_the_idle_time_is_bounded_by_that_idle_time():
    rules = _rules(DATA / "sync_bound.json")
    assert rules["syncs"].bound_ns == 65 * US  # the sync [5, 75) over the idle [10, 80)
    assert "data-loading" not in rules


def test_exposed_communication_is_bounded_by_the_exposed_time():
    rules = _rules(DATA / "comm_bound.json")  # an all-reduce [20, 90), compute [0, 30)
    assert rules["communication"].bound_ns == 60 * US
    assert rules["communication"].per_step_ns is None  # the trace has no steps
    assert "launch-overhead" not in rules


def test_launches_longer_than_their_kernels_are_bounded_by_their_cpu_time(tmp_path):
    """Three steps of four 30 us launches of 2 us kernels: 360 us of launch CPU time, all of it
    while the GPU is idle."""
    found = advise(summarize(_trace(tmp_path, kernels_us=2, launch_us=30, gap_us=10)))
    assert [r.rule for r in found] == ["launch-overhead"]
    assert (found[0].bound_ns, found[0].per_step_ns) == (360 * US, 120 * US)


def test_a_busy_gpu_gets_no_advice(tmp_path):
    assert advise(summarize(_trace(tmp_path, kernels_us=4000, launch_us=10, gap_us=1))) == []
    # nor does a trace without GPU work
    cpu = _trace(tmp_path, kernels_us=0, launch_us=30, gap_us=5, cpu_only=True)
    assert advise(summarize(cpu)) == []


def test_a_cause_under_the_threshold_stays_silent(tmp_path):
    """Launches of 2 us before 1 us kernels, 42 us apart: every kernel is shorter than its
    launch, but the launch CPU time is under 5% of the wall time (MIN_SAVING)."""
    summary = summarize(_trace(tmp_path, kernels_us=1, launch_us=2, gap_us=40))
    e = summary.verdict.evidence
    assert e.short_work_share >= SHORT_KERNELS
    assert 0 < e.launch_cpu_ns < MIN_SAVING * e.wall_ns
    assert advise(summary) == []


def test_summary_prints_the_next_steps_in_text_markdown_and_json():
    path = str(DATA / "dataloader_bound.json")
    text = run("summary", path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    at = lines.index("Next steps (largest possible saving first)")
    assert lines[at + 1] == "1. The GPU waits for the DataLoader: up to 70 us per step"
    assert "pin_memory=True" in lines[at + 2]
    markdown = run("summary", path, "--format", "markdown").stdout
    assert "**1. The GPU waits for the DataLoader: up to 70 us per step**" in markdown
    doc = json.loads(run("summary", path, "--format", "json").stdout)
    assert [(s["rule"], s["bound_ns"], s["bound_per_step_ns"]) for s in doc["next_steps"]] == [
        ("data-loading", 70 * US, 70 * US)
    ]
