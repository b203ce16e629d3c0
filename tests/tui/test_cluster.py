"""`--cluster`: the rank pass on a Dask cluster gives what the local pool gives, keeps the other
ranks when a worker dies, and says in one line why it cannot run."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import signal

import pytest

from tests.bench.make_rank_set import write_rank_set
from tests.conftest import SHARED
from tests.tui.helpers import loaded, run
from tui.commands import cluster
from tui.commands.command import CommandError
from tui.model.analysis.rank_stats import RankFailed, RankStats
from tui.model.ingest.rank_folder import rank_files
from tui.model.passes.ranks import summarise_ranks
from tui.widgets.rank_view import RankView

# Dask is imported by the tests that start a cluster here (0.2 s that every test process would
# otherwise pay as it collects).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None, reason="the cluster extra is not installed"
)

DLRM = SHARED / "param" / "dlrm_kineto_ws8"
# No dashboard, and the scheduler's HTTP server on a free port: with two clusters up, the second
# one's warned that 8787 was taken.
QUIET = {
    "dashboard_address": None,
    "scheduler_kwargs": {"dashboard_address": ":0"},
    "silence_logs": logging.ERROR,
}


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranks")
    write_rank_set(folder, ranks=6, steps=3, slow_rank=4, slow_step=2)
    return folder


@pytest.fixture(scope="module")
def scheduler():
    """A running cluster of one worker process, reached at its address as a user reaches one
    (`--cluster tcp://...`): one cluster for the tests that only ask it for work (each one a
    cluster of its own took 2 s of CPU to start and stop; the tests with two workers are the
    `local:2` one and the one that kills a worker)."""
    import distributed

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, **QUIET) as local:
        yield local.scheduler_address


def test_a_local_cluster_gives_what_the_local_pool_gives(ranks):
    """`local:2`, as a user starts it: the command starts the cluster and stops it, and Dask
    says nothing on stderr."""
    here = run("summary", str(ranks), "--format", "json", "--no-cache", "--workers", "2")
    there = run(
        "summary",
        str(ranks),
        "--format",
        "json",
        "--no-cache",
        "--cluster",
        "local:2",
        process=True,
    )
    assert there.returncode == 0, there.stderr
    assert json.loads(there.stdout) == json.loads(here.stdout)
    assert not there.stderr


@pytest.mark.skipif(not DLRM.exists(), reason=f"{DLRM} is not here (no ../shared checkout)")
def test_a_running_cluster_gives_what_the_local_pool_gives_on_real_ranks(scheduler):
    # In this process: what Dask says on stderr is checked by the `local:2` test above.
    here = run("summary", str(DLRM), "--format", "json", "--no-cache", "--workers", "2")
    there = run("summary", str(DLRM), "--format", "json", "--no-cache", "--cluster", scheduler)
    assert there.returncode == 0, there.stderr
    assert json.loads(there.stdout) == json.loads(here.stdout)


def test_two_rank_sets_diff_on_a_cluster_as_here(ranks, scheduler, tmp_path):
    write_rank_set(tmp_path, ranks=6, steps=3, slow_rank=1, slow_step=2, compute_us=7000)
    args = ["diff", str(ranks), str(tmp_path), "--format", "json", "--no-cache"]
    there = run(*args, "--cluster", scheduler)
    assert there.returncode == 0, there.stderr
    assert json.loads(there.stdout) == json.loads(run(*args).stdout)


def test_a_worker_killed_mid_pass_loses_no_other_rank(ranks):
    import distributed

    local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, **QUIET)
    client = distributed.Client(local)
    try:
        pids = list(client.run(os.getpid).values())
        killed = []

        def done(finished: int, total: int) -> None:
            if not killed:  # the first rank back: one worker dies with the rest to do
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

        found = rank_files(str(ranks))
        results = summarise_ranks(found, None, False, client.get_executor(), done)
    finally:
        client.close()
        local.close()
    assert killed
    alone = summarise_ranks(found, 1, use_cache=False)
    assert [getattr(r, "rank", None) for r in results] == [r.rank for r in alone]
    for got, want in zip(results, alone, strict=True):
        # Dask gives a dead worker's ranks to the others; one it cannot is one line.
        assert got == want or (isinstance(got, RankFailed) and "\n" not in got.error)
    assert sum(isinstance(r, RankStats) for r in results) >= len(alone) - 1


async def test_the_rank_view_summarises_on_a_cluster(ranks, scheduler):
    import distributed

    client = distributed.Client(scheduler)
    try:
        with distributed.get_task_stream(client) as stream:
            async with loaded(ranks, (120, 40), executor=client.get_executor()) as (_pilot, app):
                table = app.query_one(RankView).query_one("#ranks")
                assert table.row_count == 6 and app.focused is table
                head = str(app.query_one(RankView).query_one("#rank-head").render())
                assert "straggler: rank 4" in head
        ran = [t["key"] for t in stream.data if "summarise_rank" in str(t["key"])]
        assert len(ran) == 6  # every rank was summarised on the cluster
    finally:
        client.close()


class _Client:
    def __init__(self, seen: dict[str, bool]) -> None:
        self.seen = seen

    def run(self, _test, _path):
        return self.seen


def test_workers_that_cannot_see_the_traces_are_said_in_one_line(ranks):
    found = rank_files(str(ranks))
    blind = _Client({"tcp://a:1": True, "tcp://b:2": False})
    with pytest.raises(CommandError) as e:
        cluster._check_workers_see(blind, "tcp://s:8786", found)
    assert str(e.value).startswith("--cluster tcp://s:8786: 1 of 2 workers cannot see ")
    assert "(e.g. tcp://b:2): the traces must be on a filesystem the workers share" in str(e.value)
    with pytest.raises(CommandError, match="the scheduler has no workers"):
        cluster._check_workers_see(_Client({}), "tcp://s:8786", found)


@pytest.mark.parametrize(
    ("args", "says", "code"),
    [
        (["summary", "{trace}", "--cluster", "local"], cluster.NOT_A_RANK_SET, 2),
        (["summary", "{ranks}", "--cluster", "local:0"], "local:N takes a number from 1", 2),
        (["summary", "{ranks}", "--cluster", "tcp://127.0.0.1:9"], "cannot reach it", 1),
    ],
)
def test_what_cannot_run_on_a_cluster_says_why_in_one_line(ranks, monkeypatch, args, says, code):
    monkeypatch.setattr(cluster, "CONNECT_S", 0.2)  # refused at once; Dask retries until then
    trace = ranks / "rank0.pt.trace.json"
    done = run(*(a.format(trace=trace, ranks=ranks) for a in args))
    assert done.returncode == code
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr
