"""The summary pass over a rank set: each rank's trace loaded and summarised in a worker
process, only its small `RankStats` sent back, so memory holds a few ranks at a time whatever
their number. Any `concurrent.futures.Executor` will do (a Dask cluster's: commands/cluster.py);
by default a process pool sized to the machine's cores (`TRACE_TUI_WORKERS` overrides).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from ..analysis.rank_stats import RankFailed, RankStats, rank_stats
from ..errors import TraceError
from ..ingest.cache import ModelCache
from ..ingest.cores import default_workers
from ..ingest.rank_folder import RankFiles
from .facts import load_trace

# multiprocessing and concurrent.futures are imported where a pool runs: a small set, summarised
# here, needs neither (about 10 ms of every `summary DIR`).
if TYPE_CHECKING:
    from concurrent.futures import Executor

# Below this many bytes of traces in all, starting worker processes costs more than it saves.
POOL_FROM_BYTES = 32 << 20


def summarise_rank(rank: int, path: str, use_cache: bool) -> RankStats | RankFailed:
    """One rank, in a worker: load (through the model cache) and summarise. The ranks are
    spread over the cores already, so each file is read by one process."""
    try:
        trace = load_trace(path, cache=ModelCache() if use_cache else None, workers=1)
        return rank_stats(trace, named_rank=rank)
    except TraceError as e:
        return RankFailed(rank, path, str(e))
    except Exception as e:  # a bug on one rank must not lose the others
        return RankFailed(rank, path, f"{path}: cannot summarise ({type(e).__name__}: {e})")


def prepare_pool() -> None:
    """Start multiprocessing's resource tracker now, while this process's standard streams are
    its own: once the viewer has the terminal, starting it fails ("bad value(s) in
    fds_to_keep"), so a set big enough for the pool never loaded."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()


def summarise_ranks(
    ranks: RankFiles,
    workers: int | None = None,
    use_cache: bool = True,
    executor: Executor | None = None,
    done: Callable[[int, int], None] | None = None,
) -> list[RankStats | RankFailed]:
    """Every rank of the set, by rank. `done(finished, total)` is called as ranks finish.

    Without `workers`, a small set (under POOL_FROM_BYTES) is summarised in this process.
    """
    jobs = [(rank, str(Path(path))) for rank, path in ranks.files.items()]
    if workers is None:
        small = sum(_size(p) for _, p in jobs) < POOL_FROM_BYTES
        workers = 1 if small else default_workers()
    workers = min(workers, len(jobs))
    results: dict[int, RankStats | RankFailed] = {}
    if executor is None and workers <= 1:
        for rank, path in jobs:
            results[rank] = summarise_rank(rank, path, use_cache)
            if done is not None:
                done(len(results), len(jobs))
        return [results[r] for r, _ in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # Fresh interpreters: the viewer's threads must not be forked into the workers.
    pool = executor or ProcessPoolExecutor(workers, multiprocessing.get_context("spawn"))
    given = dict(jobs)
    # A cluster's workers run elsewhere, from another folder: they get absolute paths.
    where = {rank: os.path.abspath(path) if executor else path for rank, path in jobs}
    try:
        futures = {
            pool.submit(summarise_rank, rank, where[rank], use_cache): rank for rank, _ in jobs
        }
        for future in as_completed(futures):
            rank = futures[future]
            try:
                results[rank] = replace(future.result(), path=given[rank])
            except BrokenProcessPool:  # a worker killed (out of memory, say): that rank fails
                results[rank] = RankFailed(rank, given[rank], f"{given[rank]}: its worker died")
            except Exception as e:  # a cluster's: its workers died running it, or it was lost
                why = f"its worker failed ({type(e).__name__}: {e})"
                results[rank] = RankFailed(rank, given[rank], f"{given[rank]}: {why}")
            if done is not None:
                done(len(results), len(jobs))
    finally:
        if executor is None:
            pool.shutdown(cancel_futures=True)
    return [results[r] for r, _ in jobs]


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
