"""Stats pane latency: from a key press (`t`, `x`, `v`) to the table painted, first and later
times, on a synthetic trace with profiler steps and many op names.

Latency is measured as in bench_frames.py: the table's `render_line` is wrapped to record when
it returns. Two numbers per key: to the first table line painted after it (the table shown) and
to the last (everything the key started done: the first `t` also repaints once the roofline,
found in a thread, adds its columns).

Usage: python tests/bench/bench_pane.py [--events 250000] [--size 160x45] [--trace PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from bench_load import trace_file

SEQUENCE = ["t", "x", "x", "v", "v", "v", "v", "v", "t", "t", "x", "x"]


async def measure(path: Path, size: tuple[int, int]) -> list[tuple[str, float, float]]:
    from tui.cli import make_app
    from tui.widgets.stats_table import StatsTable

    app = make_app(path)
    painted: list[float] = []
    original = StatsTable.render_line

    def timed(self, y):  # type: ignore[no-untyped-def]
        strip = original(self, y)
        painted.append(time.perf_counter())
        return strip

    StatsTable.render_line = timed  # type: ignore[method-assign]
    out = []
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        for key in SEQUENCE:
            painted.clear()
            start = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            first, last = (painted[0], painted[-1]) if painted else (start, start)
            out.append((key, (first - start) * 1000, (last - start) * 1000))
    StatsTable.render_line = original  # type: ignore[method-assign]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=250_000)
    parser.add_argument("--size", default="160x45")
    parser.add_argument("--trace", type=Path, help="a real trace instead of the synthetic one")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    path = args.trace or trace_file(args.events)
    results = asyncio.run(measure(path, (width, height)))
    print(f"{path.name}, terminal {width}x{height}")
    print("  key   first paint   last paint")
    for key, first, last in results:
        print(f"  {key}  {first:9.1f} ms {last:9.1f} ms")


if __name__ == "__main__":
    main()
