"""Side by side: our load and summary against HolisticTraceAnalysis and a plain json.load.

Each run is a fresh process, so its peak RSS is its own. HTA wants the trace in a folder, named
like `rank-0.json`, with `distributedInfo.rank` (gen_trace.py writes it); it is a benchmark
dependency only, run from its own interpreter:

  python3 -m venv /tmp/htavenv && /tmp/htavenv/bin/pip install HolisticTraceAnalysis
  python tests/bench/compare.py --events 1000000 --hta-python /tmp/htavenv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_load import ROOT, trace_file

OURS_LOAD = """
import json, resource, sys, time
from tui.model.ingest import load_trace
t = time.perf_counter()
trace = load_trace(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - t,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

OURS_SUMMARY = """
import json, resource, sys, time
from tui.model.ingest import load_trace
from tui.model.analysis.ops import op_stats
from tui.model.analysis.summary import summarize
t = time.perf_counter()
trace = load_trace(sys.argv[1])
summary, ops = summarize(trace), op_stats(trace)
print(json.dumps({"seconds": time.perf_counter() - t,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

HTA_LOAD = """
import json, resource, sys, time
from hta.trace_analysis import TraceAnalysis
t = time.perf_counter()
analysis = TraceAnalysis(trace_dir=sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - t,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

JSON_LOAD = """
import json, resource, sys, time
t = time.perf_counter()
with open(sys.argv[1]) as f:
    doc = json.load(f)
print(json.dumps({"seconds": time.perf_counter() - t,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def measure(python: str, script: str, target: str) -> dict[str, float] | str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([python, "-c", script, target], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or ["failed"])[-1][:120]
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--hta-python", default=sys.executable)
    args = parser.parse_args()
    path = trace_file(args.events)
    with tempfile.TemporaryDirectory() as folder:
        os.symlink(path, Path(folder) / "rank-0.json")
        runs = {
            "trace-tui load": measure(sys.executable, OURS_LOAD, str(path)),
            "trace-tui load + summary": measure(sys.executable, OURS_SUMMARY, str(path)),
            "HTA TraceAnalysis load": measure(args.hta_python, HTA_LOAD, folder),
            "json.load": measure(sys.executable, JSON_LOAD, str(path)),
        }
    base = runs["trace-tui load"]
    size = path.stat().st_size
    print(f"{args.events} events, {size / 1e6:.0f} MB file")
    print("| run | time | x ours | peak RSS | x ours |\n|---|---|---|---|---|")
    for name, r in runs.items():
        if isinstance(r, str) or isinstance(base, str):
            print(f"| {name} | failed: {r} | | | |")
            continue
        print(
            f"| {name} | {r['seconds']:.2f} s | {r['seconds'] / base['seconds']:.1f} | "
            f"{r['peak'] / 1e6:.0f} MB | {r['peak'] / base['peak']:.1f} |"
        )


if __name__ == "__main__":
    main()
