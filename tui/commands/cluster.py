"""`--cluster ADDRESS`: the rank pass of `summary DIR`, `diff DIR_A DIR_B` and the rank view on a
Dask distributed cluster (the optional `cluster` extra), through the executor its client gives.

`local` (or `local:N`) starts a cluster of N worker processes on this machine (default one per
core); anything else is a scheduler's address (`tcp://host:8786`). The workers read the traces
themselves, so they must see them at the same paths: one is checked on every worker first. Each
worker keeps its own model cache (the default folder, or `TRACE_TUI_CACHE_DIR`, where it runs).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from tui.commands.command import CommandError
from tui.model.ingest.cores import default_workers
from tui.model.ingest.rank_folder import RankFiles
from tui.model.text import printable

if TYPE_CHECKING:  # `summary` and `diff` import this module for their flag, not for a cluster
    from concurrent.futures import Executor

CONNECT_S = 10  # how long to wait for a scheduler to answer
NOT_A_RANK_SET = "--cluster summarises a folder of rank traces, and this is not one"


def add_cluster_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="summarise a folder's ranks on a Dask cluster: a scheduler's address "
        "(tcp://host:8786), or local[:N] for N worker processes here (needs the cluster extra: "
        "pip install 'trace-tui[cluster]'); the workers must see the traces at the same paths",
    )


@contextmanager
def cluster_executor(address: str | None, *sets: RankFiles | None) -> Iterator[Executor | None]:
    """The cluster's executor while the block runs (None without `address`, or for a single
    trace, which is read here); the client, and a local cluster, close after it."""
    if address is None:
        yield None
        return
    if None in sets:
        raise CommandError(NOT_A_RANK_SET, 2)
    import logging  # here, as distributed: a run without --cluster needs neither

    try:
        import distributed
    except ImportError:
        raise CommandError(
            "--cluster needs Dask's distributed package: pip install 'trace-tui[cluster]'", 2
        ) from None
    local: Any = None
    try:
        if address == "local" or address.startswith("local:"):
            local = distributed.LocalCluster(
                n_workers=_local_workers(address),
                threads_per_worker=1,  # a rank's summary is Python: one per process
                processes=True,
                dashboard_address=None,
                # Its HTTP server still starts: on a free port, not 8787 (taken by another
                # cluster, it would warn on stderr).
                scheduler_kwargs={"dashboard_address": ":0"},
                silence_logs=logging.ERROR,
            )
            client = distributed.Client(local)
        else:
            client = distributed.Client(address, timeout=CONNECT_S)
    except (OSError, TimeoutError, ValueError) as e:
        if local is not None:
            local.close()
        raise CommandError(f"--cluster {printable(address)}: cannot reach it ({e})") from None
    try:
        for ranks in sets:
            assert ranks is not None
            _check_workers_see(client, address, ranks)
        yield client.get_executor()
    finally:
        client.close()
        if local is not None:
            local.close()


def _local_workers(address: str) -> int:
    count = address.removeprefix("local").removeprefix(":")
    if not count:
        return default_workers()
    if not count.isdigit() or int(count) < 1:
        raise CommandError(f"--cluster {printable(address)}: local:N takes a number from 1", 2)
    return int(count)


def _check_workers_see(client: Any, address: str, ranks: RankFiles) -> None:
    """One line, and no pass, when a worker cannot read the set's first trace where we see it."""
    path = os.path.abspath(next(iter(ranks.files.values())))
    seen: dict[str, bool] = client.run(os.path.isfile, path)
    if not seen:
        raise CommandError(f"--cluster {printable(address)}: the scheduler has no workers")
    blind = [worker for worker, ok in seen.items() if not ok]
    if blind:
        raise CommandError(
            f"--cluster {printable(address)}: {len(blind)} of {len(seen)} workers cannot see "
            f"{printable(path)} (e.g. {blind[0]}): the traces must be on a filesystem the "
            "workers share, at the same path"
        )
