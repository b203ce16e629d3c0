"""`summary` of every shared trace on this build and on an older one, cached, interleaved: the CPU
time (user + sys) of each, as issue 31 item 4 asks ("no more CPU than the older build on any
shared trace"). The first round fills both caches and is not kept; medians of the rest.

Usage: python tests/bench/bench_shared_summary.py REF [--repeat 3] [--min-bytes 300000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench_compare import export, run
from bench_load import ROOT

SHARED = ROOT.parent / "shared" / "traces"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--min-bytes", type=int, default=300_000)
    args = parser.parse_args()
    files = sorted(
        p
        for p in SHARED.rglob("*")
        if p.is_file()
        and p.name.endswith((".json", ".json.gz"))
        and "reports" not in p.parts
        and "execution_details" not in p.name
        and p.stat().st_size > args.min_bytes
    )
    with tempfile.TemporaryDirectory(prefix="bench-shared-") as scratch:
        ref, here = export(args.ref, Path(scratch) / "ref"), export(None, Path(scratch) / "here")
        cpu: dict[tuple[str, str], list[float]] = {}
        for round_ in range(args.repeat + 1):
            for f in files:
                for build in (ref, here):
                    try:
                        _, used, _, _ = run(build, ["-m", "tui", "summary", str(f)], {})
                    except RuntimeError:
                        if build is here:
                            raise
                        continue  # a trace the older build refuses
                    if round_:
                        cpu.setdefault((f.name, build.name), []).append(used)
        for f in files:
            a, h = cpu.get((f.name, ref.name)), cpu.get((f.name, here.name))
            if not a or not h:
                print(f"{f.relative_to(SHARED)}: n/a")
                continue
            ma, mh = statistics.median(a), statistics.median(h)
            print(f"{f.relative_to(SHARED)}\t{ma:.2f} s\t{mh:.2f} s\t{mh / ma:.2f}x", flush=True)


if __name__ == "__main__":
    main()
