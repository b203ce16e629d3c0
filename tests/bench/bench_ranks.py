"""The summary pass over a rank set: ranks per second at 1, 2 and 4 worker processes (and on a
Dask cluster, `--cluster local:2` or a scheduler's address), and peak memory (this process and
its workers). Not a test; run by hand:

    python3 tests/bench/bench_ranks.py [--ranks 32] [--filler 20000] [--cluster local:2]

It writes a generated rank set (tests/bench/make_rank_set.py) into a temporary folder, then runs
the pass without the model cache, as on a first open.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tui.commands.cluster import cluster_executor
from tui.model.analysis.rank_compare import compare
from tui.model.ingest.rank_folder import RankFiles, rank_files
from tui.model.passes.ranks import summarise_ranks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=32)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--filler", type=int, default=20000, help="small CPU ops per step")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--cluster", help="also on this Dask cluster (needs distributed)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # Written by another process: this one's peak memory is then the passes' alone.
        make = [sys.executable, str(Path(__file__).with_name("make_rank_set.py")), tmp]
        extra = ["--slow-rank", "1", "--slow-step", "1", "--filler", str(opts.filler)]
        subprocess.run([*make, "--ranks", str(opts.ranks), "--steps", str(opts.steps), *extra],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(f"{opts.ranks} ranks, {size / opts.ranks / 1e6:.1f} MB each")
        ranks = rank_files(folder)
        assert ranks is not None
        # Pools and the cluster first: this process holds only the rows they send back, and
        # its peak is read before one process loads the ranks here itself.
        counts = sorted((int(w) for w in opts.workers.split(",")), reverse=True)
        for workers in [w for w in counts if w > 1]:
            _time(f"workers {workers}", ranks, workers=workers)
        if opts.cluster:
            t = time.perf_counter()
            with cluster_executor(opts.cluster, ranks) as executor:
                started = time.perf_counter() - t
                _time(f"cluster {opts.cluster}", ranks, executor=executor)
            print(f"  (the cluster started in {started:.2f} s)")
        me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS of this process so far: {me:.0f} MiB")
        if 1 in counts:
            _time("workers 1 (this process)", ranks, workers=1)
        me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak RSS: this process {me:.0f} MiB, largest local worker {kids:.0f} MiB")


def _time(label: str, ranks: RankFiles, **how: Any) -> None:
    t = time.perf_counter()
    stats = summarise_ranks(ranks, use_cache=False, **how)
    seconds = time.perf_counter() - t
    assert compare(stats).straggler == 1
    print(f"{label}: {seconds:.2f} s, {len(ranks.files) / seconds:.1f} ranks/s")


if __name__ == "__main__":
    main()
