"""This build against the one at a git ref, path by path, interleaved.

The ref is exported (`git archive`) and installed into a temporary virtualenv that sees this
interpreter's packages (so both builds run on the same numpy, msgspec, textual). Each path runs
as a fresh process, the two builds taking turns, each with its own model cache; the medians of
wall time, CPU time (user + sys) and peak RSS are printed with this build's ratio to the ref's.

Paths: the first open (`info --no-cache`) of synthetic traces of each `--events` size, one
process, two and four workers (and this build's speed-up over one worker, round by round); a
cached open (`info`); `summary`; `diff` of the first trace against itself; `summary` of a
generated rank set (the rank pass; where the ref's `summary DIR` took one trace of the set, as
4685252's did, its time to summarise each rank in turn is printed too); and the stats pane's
keys (bench_keys.py's `t` and `x`, to the first frame) where the ref's app can be driven that
way.

Usage: python tests/bench/bench_compare.py REF [--events 1000000 5000000] [--repeat 3]
       [--ranks 16]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_load import HERE, OUT, ROOT, trace_file
from make_rank_set import write_rank_set

KEYS = """
import asyncio, sys
sys.path.insert(0, {bench!r})
from bench_keys import measure
from pathlib import Path
for key, first, _ in asyncio.run(measure(Path(sys.argv[1]), None, (160, 45)))[:2]:
    print(key, first)
"""


@dataclass(frozen=True)
class Build:
    name: str
    python: str
    cwd: Path  # outside any checkout: `python -m tui` imports the installed copy
    cache: Path


def export(ref: str | None, into: Path) -> Build:
    """The project at `ref` (None: the working tree), installed into its own virtualenv under
    `into`: both builds run from installed, byte-compiled copies."""
    into.mkdir(parents=True)
    src = ROOT
    if ref is not None:
        src = into / "src"
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True)
        tar = into / "src.tar"
        tar.write_bytes(archive.stdout)
        with tarfile.open(tar) as t:
            t.extractall(src, filter="data")
    venv = into / "venv"
    # Without a pip of its own: the venv's bundled setuptools would shadow this interpreter's
    # (the project needs setuptools >= 68); this interpreter's pip installs into it.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv])
    python = str(venv / "bin" / "python")
    install = ["install", "-q", "--no-deps", "--no-build-isolation", str(src)]
    subprocess.run([sys.executable, "-m", "pip", "--python", python, *install], check=True)
    return Build(ref or "this build", python, into, into / "cache")


def run(build: Build, args: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the process and its children, peak RSS bytes, its output) of one
    command."""
    # Output to files, not pipes: a pipe not read until the end blocks a long summary.
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [build.python, *args],
            cwd=build.cwd,
            env={**os.environ, "TRACE_TUI_CACHE_DIR": str(build.cache), **env},
            stdout=stdout,
            stderr=stderr,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        stdout.seek(0)
        stderr.seek(0)
        out, err = stdout.read().decode(), stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{build.name}: {' '.join(args)}: {err.strip()[-300:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, out


def paths(sizes: list[int], ranks: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    out = []
    for events in sizes:
        path = str(trace_file(events))
        label = f"{events / 1e6:g}M"
        for workers in ("1", "2", "4"):
            first_open = ["-m", "tui", "info", "--no-cache", path]
            env = {"TRACE_TUI_WORKERS": workers}
            out.append((f"first open {label}, {workers} worker(s)", first_open, env))
        out.append((f"cached info {label}", ["-m", "tui", "info", path], {}))
        out.append((f"cached summary {label}", ["-m", "tui", "summary", path], {}))
    first = str(trace_file(sizes[0]))
    out.append((f"diff {sizes[0] / 1e6:g}M", ["-m", "tui", "diff", first, first], {}))
    out.append(("rank pass", ["-m", "tui", "summary", str(ranks)], {}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref")
    parser.add_argument("--events", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=16)
    args = parser.parse_args()
    ranks = OUT / f"ranks_{args.ranks}"
    if not ranks.exists():
        write_rank_set(ranks, ranks=args.ranks, steps=4, slow_rank=1, slow_step=2, filler=2000)
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as scratch:
        ref = export(args.ref, Path(scratch) / "ref")
        here = export(None, Path(scratch) / "here")
        todo = paths(args.events, ranks)
        results: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
        failed: dict[tuple[str, str], str] = {}
        outputs: dict[tuple[str, str], str] = {}
        for _ in range(args.repeat + 1):  # the first round fills both caches, and is not kept
            for label, argv, env in todo:
                for build in (ref, here):
                    if (label, build.name) in failed:
                        continue
                    try:
                        done = run(build, argv, env)
                    except RuntimeError as error:  # a path the older build does not have
                        failed[(label, build.name)] = str(error)
                        continue
                    results.setdefault((label, build.name), []).append(done[:3])
                    outputs[(label, build.name)] = done[3]
        for label, _, _ in todo:
            for build in (ref, here):
                results[(label, build.name)] = results.get((label, build.name), [])[1:]
        one_trace = _one_trace_of(outputs.get(("rank pass", ref.name), ""), ranks)
        each_rank = _each_rank_in_turn(ref, ranks, args.repeat) if one_trace else None
        keys: dict[tuple[str, str], list[float]] = {}
        code = KEYS.format(bench=str(HERE))
        for _ in range(args.repeat):
            for build in (ref, here):
                try:
                    *_, out = run(build, ["-c", code, str(trace_file(args.events[0]))], {})
                except RuntimeError:  # an app that cannot be driven as bench_keys.py does
                    continue
                for key, ms in re.findall(r"(\w) ([\d.]+)", out):
                    keys.setdefault((build.name, key), []).append(float(ms))
    print(f"this build against {args.ref}: medians of {args.repeat} interleaved runs")
    print(f"{'path':36} {'ref wall':>9} {'ours':>7} {'ratio':>6} {'ref CPU':>8} {'ours':>7}"
          f" {'ref RSS':>8} {'ours':>7}")  # fmt: skip
    for label, _, _ in todo:
        a, b = results[(label, args.ref)], results[(label, "this build")]
        if not a or not b:
            why = failed.get((label, args.ref)) or failed.get((label, "this build"))
            print(f"{label:36} n/a: {why}")
            continue
        (wa, ca, ma), (wb, cb, mb) = (
            tuple(statistics.median(x[i] for x in r) for i in range(3)) for r in (a, b)
        )
        print(
            f"{label:36} {wa:8.2f}s {wb:6.2f}s {wb / wa:6.2f} {ca:7.2f}s {cb:6.2f}s"
            f" {ma / 2**20:6.0f}MB {mb / 2**20:5.0f}MB"
        )
    for events in args.events:
        print(_scaling(results, f"{events / 1e6:g}M"))
    if one_trace and each_rank:
        wall, cpu = each_rank
        print(
            f"  {args.ref}'s `summary DIR` summarised one trace of the set ({one_trace}), not its"
            f" ranks; `summary` of each rank in turn took it {wall:.2f} s ({cpu:.2f} s CPU)"
        )
    for key in ("t", "x"):
        shown = [
            f"{statistics.median(keys[(name, key)]):.0f} ms" if (name, key) in keys else "n/a"
            for name in (args.ref, "this build")
        ]
        print(f"pane key {key!r} to its first frame: ref {shown[0]}, this build {shown[1]}")


def _scaling(results: dict[tuple[str, str], list[tuple[float, float, int]]], size: str) -> str:
    """This build's first open with two and four workers against one, round by round (the rounds
    ran interleaved, so each ratio compares runs of the same minute)."""
    one = [wall for wall, _, _ in results[(f"first open {size}, 1 worker(s)", "this build")]]
    said = []
    for workers in ("2", "4"):
        runs = results[(f"first open {size}, {workers} worker(s)", "this build")]
        ratios = [a / b for a, (b, _, _) in zip(one, runs, strict=True)]
        each = ", ".join(f"{r:.2f}" for r in ratios)
        said.append(f"{workers} workers {each} (median {statistics.median(ratios):.2f}x)")
    return f"  {size}, this build's speed-up over one worker, by round: " + "; ".join(said)


def _one_trace_of(output: str, ranks: Path) -> str | None:
    """The file a build's `summary DIR` summarised, where it took one trace of the set rather
    than the rank set (older builds did: their first line names the file)."""
    first = output.partition("\n")[0].strip()
    return Path(first).name if first and Path(first).parent == ranks else None


def _each_rank_in_turn(build: Build, ranks: Path, repeat: int) -> tuple[float, float] | None:
    """Median (wall s, CPU s) of `summary` run on each rank's file in turn: what the rank pass
    stands for on a build without one."""
    files = sorted(p for p in ranks.iterdir() if p.is_file())
    rounds = []
    for _ in range(repeat):
        try:
            done = [run(build, ["-m", "tui", "summary", str(f)], {}) for f in files]
        except RuntimeError:
            return None
        rounds.append((sum(d[0] for d in done), sum(d[1] for d in done)))
    return statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds)


if __name__ == "__main__":
    main()
