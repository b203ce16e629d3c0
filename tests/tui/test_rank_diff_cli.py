"""`trace-tui diff DIR_A DIR_B`: two runs of one job compared rank by rank, as a user runs it."""

from __future__ import annotations

import json

import pytest

from tests.bench.make_rank_set import COMPUTE_US, write_rank_set
from tests.tui.helpers import run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """BASE: rank 2 straggles; NEW: every GEMM 1 ms slower and rank 1 straggles; SMALL: 3 ranks."""
    root = tmp_path_factory.mktemp("runs")
    write_rank_set(root / "base", ranks=4, steps=3, slow_rank=2, slow_step=1)
    write_rank_set(
        root / "new", ranks=4, steps=3, slow_rank=1, slow_step=1, compute_us=COMPUTE_US + 1000
    )
    write_rank_set(root / "small", ranks=3, steps=3, slow_rank=2, slow_step=1)
    return root


def test_each_rank_base_new_and_change_and_the_stragglers(runs):
    done = run("diff", str(runs / "base"), str(runs / "new"), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["ranks_in"] == {"base": 4, "new": 4} and doc["straggler_rank"] == {
        "base": 2,
        "new": 1,
    }
    # every step 1 ms longer: 7.15 ms -> 8.15 ms on every rank
    pace = doc["slowest_step_ns"]
    assert (pace["base"], pace["new"], pace["delta"]) == (7_150_000, 8_150_000, 1_000_000)
    assert pace["percent"] == pytest.approx(100 / 7.15)  # percent, as the trace diff's
    rows = {r["rank"]: r for r in doc["ranks"]}
    assert set(rows) == {0, 1, 2, 3}
    assert all(r["step_median_ns"]["delta"] == 1_000_000 for r in rows.values())
    # rank 1 now arrives last: the others wait for it, it waits for none (4 ms less exposed)
    assert rows[1]["exposed_comm_ns"]["delta"] == -4_000_000
    assert rows[2]["exposed_comm_ns"]["delta"] == 4_000_000
    assert rows[0]["gpu_busy_fraction"]["base"] > 0.9
    assert doc["regressed_most"] == [0, 1, 2, 3]
    text = run("diff", str(runs / "base"), str(runs / "new"))
    assert "slowest rank's median step: 7.15 ms -> 8.15 ms (+14.0%)" in text.stdout
    assert "straggler: rank 2 -> rank 1" in text.stdout
    assert "regressed most: rank 0 +14.0%, rank 1 +14.0%" in text.stdout


def test_the_gate_judges_the_slowest_ranks_step(runs):
    base, new = str(runs / "base"), str(runs / "new")
    failed = run("diff", base, new, "--fail-on-regression", "10", process=True)
    assert failed.returncode == 3
    assert failed.stderr.strip().splitlines()[-1] == (
        "trace-tui: the slowest rank's median step regressed 14.0% (over 10%): most grown: "
        "rank 0, rank 1, rank 2, rank 3"
    )
    assert "Traceback" not in failed.stderr
    assert run("diff", base, new, "--fail-on-regression", "15").returncode == 0
    assert run("diff", new, base, "--fail-on-regression", "0").returncode == 0  # it got faster


def test_sets_of_different_sizes_compare_the_ranks_both_have(runs):
    done = run("diff", str(runs / "base"), str(runs / "small"))
    assert done.returncode == 0, done.stderr
    assert (
        "note: the sets differ: 4 ranks in BASE, 3 in NEW (BASE only: 3); "
        "the 3 ranks both have are compared"
    ) in done.stdout
    doc = json.loads(
        run("diff", str(runs / "base"), str(runs / "small"), "--format", "json").stdout
    )
    assert [r["rank"] for r in doc["ranks"]] == [0, 1, 2] and doc["only_base"] == [3]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--sort", "self_cpu"], "--sort: rank sets are listed by the change of each rank's step"),
        (["--metric", "busy"], "--metric busy: rank sets are gated on the step only"),
        (
            ["--fail-on-regression", "nan"],
            "--fail-on-regression must be 0 or more (a percent of growth)",
        ),
    ],
)
def test_flags_of_a_trace_diff_are_refused_in_one_line(runs, extra, says):
    done = run("diff", str(runs / "base"), str(runs / "new"), *extra)
    assert done.returncode == 2 and done.stderr.strip() == f"trace-tui: {says}"


def test_a_folder_against_a_trace_is_refused(runs):
    trace = runs / "base" / "rank0.pt.trace.json"
    done = run("diff", str(runs / "base"), str(trace))
    assert done.returncode == 2
    assert "compare a rank folder with a rank folder, or a trace with a trace" in done.stderr


def test_a_missing_path_beside_a_folder_is_said_as_missing(runs):
    for pair in ((runs / "gone", runs / "base"), (runs / "base", runs / "gone")):
        done = run("diff", *map(str, pair))
        assert done.returncode == 1
        assert done.stderr.strip() == f"trace-tui: {runs / 'gone'}: no such file or folder"


def test_csv_and_markdown(runs):
    md = run("diff", str(runs / "base"), str(runs / "new"), "--format", "markdown")
    assert md.stdout.startswith("# Rank sets: ") and "| Rank |" in md.stdout
    csv = run("diff", str(runs / "base"), str(runs / "new"), "--format", "csv")
    assert csv.returncode == 0 and "step_median_ns.delta" in csv.stdout.splitlines()[0]


def test_each_sides_notes_are_kept_and_named(runs, tmp_path):
    import os
    import shutil

    new = tmp_path / "new"
    shutil.copytree(runs / "new", new)
    older = new / "rank0_before.pt.trace.json"
    shutil.copy(new / "rank0.pt.trace.json", older)
    os.utime(older, (1, 1))  # an earlier run's trace of rank 0: the newest is compared
    done = run("diff", str(runs / "base"), str(new))
    assert done.returncode == 0
    assert "note: NEW: 1 older traces of the same ranks left out (newest kept)" in done.stdout
