"""Load benchmark: time, peak RSS and model size for synthetic traces of 100k and 1M events.

Each load runs in a fresh process, so peak RSS is that load's alone. Traces are generated once
into tests/bench/out/ (ignored by git) by gen_trace.py.

Usage: python tests/bench/bench_load.py [--events 100000 1000000] [--repeat 3] [--baseline]
                                         [--epoch] [--workers 1 2 4]
  --workers   first opens with each number of decoding processes (one big file across cores);
              without it, the loader's default (the cores, for files of 128 MB or more)
  --baseline  also time orjson.loads of the same file, the naive way to read it
  --epoch     the same traces with epoch microseconds (1.7e15 and three decimals, as older Kineto
              wrote them): the loader reads those timestamps again to keep their nanoseconds
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
ROOT = HERE.parent.parent

_LOAD = """
import json, resource, sys, time
from pathlib import Path
from tui.model.ingest import load_trace
from tui.model.ingest.cache import ModelCache
workers = int(sys.argv[2]) if sys.argv[2] != "default" else None
cache = ModelCache(Path(sys.argv[3])) if len(sys.argv) > 3 else None
t = time.perf_counter()
trace = load_trace(sys.argv[1], cache=cache, workers=workers)
elapsed = time.perf_counter() - t
strings = sum(len(s.encode()) for s in trace.names) + sum(len(c) for c in trace.categories)
print(json.dumps({"seconds": elapsed, "slices": len(trace.slices), "model_bytes": trace.nbytes(),
                  "string_bytes": strings, "links": len(trace.launches),
                  "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "worker_rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
"""

_BASELINE = """
import gc, json, resource, sys, time
import orjson
gc.disable()
t = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    doc = orjson.loads(f.read())
elapsed = time.perf_counter() - t
print(json.dumps({"seconds": elapsed,
                  "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


EPOCH_US = 1_700_000_000_000_000
_TS = re.compile(rb'"ts": (\d+)\.')


def trace_file(events: int, epoch: bool = False) -> Path:
    path = OUT / f"synthetic_{events}.json"
    if not path.exists():
        OUT.mkdir(exist_ok=True)
        subprocess.run(
            [sys.executable, str(HERE / "gen_trace.py"), str(events), str(path)], check=True
        )
    if not epoch:
        return path
    shifted = OUT / f"synthetic_{events}_epoch.json"
    if not shifted.exists():
        with open(path, "rb") as src, open(shifted, "wb") as dst:
            for line in src:
                line = line.replace(b'"baseTimeNanoseconds"', b'"baseTimeNanosecondsWas"')
                dst.write(_TS.sub(lambda m: b'"ts": %d.' % (int(m[1]) + EPOCH_US), line))
    return shifted


def run(script: str, path: Path, *extra: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(path), *extra],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--epoch", action="store_true")
    parser.add_argument("--workers", type=int, nargs="+")
    args = parser.parse_args()
    print(
        f"{'events':>9} {'file MB':>8} {'load s':>7} {'peak MB':>8} {'x file':>6} "
        f"{'slices':>9} {'B/slice':>8} {'strings KB':>10}"
    )
    for events in args.events:
        path = trace_file(events, args.epoch)
        size = path.stat().st_size
        runs = [run(_LOAD, path, "default") for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        peak = max(r["peak_rss"] for r in runs)
        print(
            f"{events:>9} {size / 1e6:>8.1f} {best['seconds']:>7.2f} {peak / 1e6:>8.0f} "
            f"{peak / size:>6.2f} {best['slices']:>9} "
            f"{best['model_bytes'] / best['slices']:>8.1f} {best['string_bytes'] / 1e3:>10.1f}"
        )
        with tempfile.TemporaryDirectory() as cache:
            run(_LOAD, path, "default", cache)  # fills the cache
            hits = [run(_LOAD, path, "default", cache) for _ in range(args.repeat)]
        hit = min(hits, key=lambda r: r["seconds"])
        print(
            f"{'':>9} re-open from the model cache: {hit['seconds']:.3f} s, "
            f"peak {max(r['peak_rss'] for r in hits) / 1e6:.0f} MB"
        )
        for workers in args.workers or []:
            timed = [run(_LOAD, path, str(workers)) for _ in range(args.repeat)]
            times = sorted(r["seconds"] for r in timed)
            peak = max(r["peak_rss"] for r in timed) / 1e6
            worker = max(r["worker_rss"] for r in timed) / 1e6
            print(
                f"{'':>9} {workers} worker(s): best {times[0]:.2f} s, median "
                f"{times[len(times) // 2]:.2f} s, peak {peak:.0f} MB (+ {worker:.0f} MB the "
                "largest worker)"
            )
        if args.baseline:
            base = run(_BASELINE, path)
            print(
                f"{'':>9} orjson.loads alone (gc off): {base['seconds']:.2f} s, "
                f"peak {base['peak_rss'] / 1e6:.0f} MB"
            )


if __name__ == "__main__":
    main()
