"""Args lookup benchmark: the time to show one slice's args, and the kernel table's lookups.

A synthetic trace (gen_trace.py, about 300k events by default) is loaded once; then the args of
slices are looked up as the details panel does: the first lookup in a chunk, a second lookup in
the same chunk (the next slice the user selects is usually a neighbour), and the kernel table,
which reads the geometry args of the first instance of every kernel name.

Usage: python tests/bench/bench_args.py [--events 300000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tui.model.ingest import load_trace  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=20)
    opts = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    path = OUT / f"synthetic_{opts.events}.json"
    if not path.exists():
        subprocess.run(
            [sys.executable, str(HERE / "gen_trace.py"), str(opts.events), str(path)], check=True
        )
    trace = load_trace(path)
    s = trace.slices
    rows = list(range(0, len(s), max(len(s) // opts.repeat, 1)))[: opts.repeat]

    def timed(row: int) -> float:
        t = time.perf_counter()
        trace.args(row)
        return time.perf_counter() - t

    first, again = [], []
    for row in rows:
        first.append(timed(row))
        again.append(timed(row + 1 if row + 1 < len(s) else row))
    t = time.perf_counter()
    from tui.model.analysis.kernels import kernel_stats

    kernels = kernel_stats(trace)
    table = time.perf_counter() - t
    print(f"{path.name}: {len(s):,} slices")
    print(f"first lookup in a chunk   median {statistics.median(first) * 1e3:.2f} ms")
    print(f"next lookup, same chunk   median {statistics.median(again) * 1e3:.3f} ms")
    print(f"kernel table ({len(kernels)} names)  {table * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
