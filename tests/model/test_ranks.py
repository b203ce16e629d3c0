"""Rank sets: finding the ranks of a folder, matching collectives, the straggler and the slow
step, on a generated set with known answers and on a real 8-rank set."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.bench.make_rank_set import DELAY_US, TRANSFER_US, write_rank_set
from tests.conftest import SHARED
from tui.model.analysis.rank_compare import compare
from tui.model.analysis.rank_stats import RankFailed, RankStats
from tui.model.ingest import load_trace
from tui.model.ingest.rank_folder import rank_files
from tui.model.passes.ranks import summarise_ranks
from tui.model.present.tables import scope_report

US = 1000
DLRM = SHARED / "param" / "dlrm_kineto_ws8"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranks")
    expected = write_rank_set(folder, ranks=4, steps=3, slow_rank=2, slow_step=1)
    stats = summarise_ranks(rank_files(folder), workers=1, use_cache=False)
    return folder, expected, stats


def test_the_straggler_the_slow_step_and_the_waits_are_found_exactly(generated):
    _, expected, stats = generated
    report = compare(stats)
    assert [r.rank for r in report.rows] == [0, 1, 2, 3]
    assert report.straggler == expected.straggler
    # Every rank's steps take the same time (they synchronise): the slowest is the one with the
    # most work of its own, the straggler.
    assert report.slowest == expected.straggler
    assert report.steps == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]
    assert report.slow_cells == {(2, 1)}  # rank 2's own work in ProfilerStep#1
    for row in report.rows:
        assert [d for _, _, d in row.stats.steps] == [us * US for us in expected.step_us]
        assert row.wait_ns == expected.wait_us[row.rank] * US
        assert row.last_arrivals == (1 if row.rank == expected.straggler else 0)
    assert report.own_work[2][1] == expected.step_us[1] * US
    assert report.own_work[0][1] == (expected.step_us[1] - DELAY_US) * US
    slow = next(m for m in report.collectives if m.index == 1)
    assert (slow.kind, slow.group, slow.transfer_ns) == ("allreduce", "0", TRANSFER_US * US)
    assert (slow.skew_ns, slow.last_rank, slow.wait_ns) == (DELAY_US * US, 2, 3 * DELAY_US * US)
    # 4 MiB all-reduced by 4 ranks in 1 ms: nccl-tests' busbw, 2 (n-1)/n of the algorithm's.
    assert slow.bytes == 4 << 20
    assert slow.bus_bandwidth == pytest.approx((4 << 20) / 1e-3 * 1.5)


def test_a_rank_row_is_its_single_trace_summary(generated):
    folder, _, stats = generated
    for row in stats:
        assert isinstance(row, RankStats)
        one = scope_report(load_trace(folder / f"rank{row.rank}.pt.trace.json")).summary
        e = one.verdict.evidence
        assert (row.window_ns, row.busy_ns, row.idle_ns) == (e.wall_ns, e.gpu_busy_ns, e.idle_ns)
        assert row.computation_ns == one.gpu_time.computation_ns
        assert row.exposed_comm_ns == one.gpu_time.exposed_comm_ns
        assert (row.verdict, row.idle_by_cause) == (one.verdict.label, one.idle_ns)


def test_any_executor_gives_the_same_rows(generated):
    folder, _, stats = generated
    with ThreadPoolExecutor(2) as pool:
        again = summarise_ranks(rank_files(folder), use_cache=False, executor=pool)
    assert again == stats


def test_worker_processes_give_the_same_rows(generated):
    folder, _, stats = generated
    assert summarise_ranks(rank_files(folder), workers=2, use_cache=False) == stats


def test_a_truncated_rank_and_a_file_that_is_no_trace_are_said(tmp_path):
    write_rank_set(tmp_path, ranks=3, steps=2)
    (tmp_path / "rank1.pt.trace.json").write_text("not json at all")
    cut = tmp_path / "rank2.pt.trace.json"
    cut.write_bytes(cut.read_bytes()[: len(cut.read_bytes()) // 2])
    results = summarise_ranks(rank_files(tmp_path), workers=1, use_cache=False)
    failed = [r for r in results if isinstance(r, RankFailed)]
    assert [f.rank for f in failed] == [1] and "not a trace" in failed[0].error
    report = compare([r for r in results if isinstance(r, RankStats)])
    assert "rank 2: its trace is truncated: its row covers what was read" in report.notes


def test_a_failing_rank_is_listed_and_the_others_still_compare(tmp_path):
    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=0, slow_step=0)
    (tmp_path / "rank1.pt.trace.json").write_text(
        '{"distributedInfo": {"rank": 1}, "traceEvents": 7}'
    )
    results = summarise_ranks(rank_files(tmp_path), workers=1, use_cache=False)
    failed = [r for r in results if isinstance(r, RankFailed)]
    assert [f.rank for f in failed] == [1] and "rank1.pt.trace.json" in failed[0].error
    report = compare([r for r in results if isinstance(r, RankStats)])
    assert [r.rank for r in report.rows] == [0, 2]


def test_missing_ranks_mixed_jobs_and_older_traces_are_said(tmp_path):
    write_rank_set(tmp_path / "a", ranks=4, steps=1)
    (tmp_path / "a" / "rank3.pt.trace.json").unlink()
    stats = summarise_ranks(rank_files(tmp_path / "a"), workers=1, use_cache=False)
    assert compare(stats).notes == ["1 of 4 ranks have no trace here: 3"]
    write_rank_set(tmp_path / "b", ranks=2, steps=1)
    mixed = tmp_path / "mixed"
    shutil.copytree(tmp_path / "a", mixed)
    shutil.copy(tmp_path / "b" / "rank1.pt.trace.json", mixed / "other_rank1.pt.trace.json")
    assert rank_files(mixed).mixed == "traces of several jobs (world sizes 2, 4)"
    one_rank = tmp_path / "one"
    one_rank.mkdir()
    shutil.copy(tmp_path / "b" / "rank1.pt.trace.json", one_rank / "a.json")
    shutil.copy(tmp_path / "b" / "rank1.pt.trace.json", one_rank / "b.json")
    assert rank_files(one_rank) is None  # one rank's traces: not a rank set


def test_the_rank_comes_from_distributed_info_else_the_file_name(tmp_path):
    write_rank_set(tmp_path, ranks=2, steps=1)
    for rank in range(2):
        path = tmp_path / f"rank{rank}.pt.trace.json"
        doc = json.loads(path.read_text())
        del doc["distributedInfo"]
        (tmp_path / f"host_worker{rank + 5}.json").write_text(json.dumps(doc))
        path.unlink()
    found = rank_files(tmp_path)
    assert sorted(found.files) == [5, 6]
    stats = summarise_ranks(found, workers=1, use_cache=False)
    assert [s.rank for s in stats] == [5, 6]


@pytest.mark.skipif(not DLRM.is_dir(), reason=f"real traces not present: {DLRM} is missing")
def test_a_real_eight_rank_set():
    stats = summarise_ranks(rank_files(DLRM), workers=1, use_cache=False)
    report = compare(stats)
    assert [r.rank for r in report.rows] == list(range(8)) and report.notes == []
    # Every rank ran the same 8 collectives (alltoall and allreduce), all matched.
    assert len(report.collectives) == 8 and all(len(m.ranks) == 8 for m in report.collectives)
    assert {m.kind for m in report.collectives} == {"alltoall", "allreduce"}
    # Rank 7 waits least: it is the one the others wait for, arriving last most often.
    assert report.straggler == 7
    assert min(report.rows, key=lambda r: r.wait_ns).rank == 7
    for m in report.collectives:
        assert min(m.waits_ns) == 0 and m.transfer_ns == min(m.durs_ns)
