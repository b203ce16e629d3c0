"""Diff benchmark: `diff()` of two synthetic traces (the second a copy with kernels twice as long),
models loaded once, each run from cold derived data (op tree, attribution), best of N.

Usage: python tests/bench/bench_diff.py [--events 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_load import OUT, trace_file
from tui.model.analysis.diff import diff
from tui.model.ingest import load_trace

_KERNEL_DUR = re.compile(rb'("cat": "kernel", [^\n]*?"dur": )([\d.]+)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = trace_file(args.events)
    slower = OUT / f"synthetic_{args.events}_slow_kernels.json"
    if not slower.exists():
        slower.write_bytes(
            _KERNEL_DUR.sub(lambda m: m[1] + b"%.3f" % (2 * float(m[2])), base.read_bytes())
        )
    traces = [load_trace(p) for p in (base, slower)]
    times = []
    for _ in range(args.repeat):
        for t in traces:
            t.derived.clear()
        start = time.perf_counter()
        d = diff(*traces)
        times.append(time.perf_counter() - start)
    kernels = sum(r.delta("total_ns") for r in d.kernels)
    print(
        f"{args.events:,} events: diff best {min(times):.2f} s (first {times[0]:.2f} s); "
        f"{len(d.ops)} op rows, {len(d.kernels)} kernel rows, {len(d.regions)} regions; "
        f"kernel time +{kernels / 1e9:.2f} s"
    )


if __name__ == "__main__":
    main()
