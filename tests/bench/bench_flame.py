"""Flame view latency on a big synthetic trace, driven headless with Pilot: from a key (move
between frames, zoom in and out) to the last line of the flame view painted, as bench_frames.py
measures the timeline; and the time to build the call tree the first time.

Usage: python tests/bench/bench_flame.py [--events 1000000] [--presses 30] [--size 200x50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from bench_load import trace_file

KEYS = ["down", "down", "down", "right", "right", "enter", "down", "left", "backspace", "up"]


async def measure(path: Path, presses: int, size: tuple[int, int]) -> tuple[float, list[float]]:
    from tui.cli import make_app
    from tui.widgets.flame_view import FlameView

    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        start = time.perf_counter()
        await pilot.press("T")
        await app.workers.wait_for_complete()  # the tree is built in a thread
        await pilot.pause()
        opened = time.perf_counter() - start  # the call tree built, the tree pane drawn
        await pilot.press("f")
        await app.workers.wait_for_complete()
        await pilot.pause()
        flame = app.query_one(FlameView)
        painted: list[float] = []
        render_line = flame.render_line

        def timed(y: int):  # type: ignore[no-untyped-def]
            strip = render_line(y)
            painted.append(time.perf_counter())
            return strip

        flame.render_line = timed  # type: ignore[method-assign]
        samples = []
        for k in range(presses):
            painted.clear()
            start = time.perf_counter()
            await pilot.press(KEYS[k % len(KEYS)])
            await pilot.pause()
            if painted:
                samples.append(painted[-1] - start)
        return opened, samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--presses", type=int, default=30)
    parser.add_argument("--size", default="200x50")
    opts = parser.parse_args()
    width, height = (int(v) for v in opts.size.split("x"))
    path = trace_file(opts.events)
    opened, samples = asyncio.run(measure(path, opts.presses, (width, height)))
    print(f"{path.name}: T (call tree built and drawn) {opened * 1e3:.0f} ms")
    if samples:
        ms = sorted(s * 1e3 for s in samples)
        print(
            f"flame view key to frame: median {statistics.median(ms):.1f} ms, "
            f"p90 {ms[int(len(ms) * 0.9) - 1]:.1f} ms, max {ms[-1]:.1f} ms ({len(ms)} frames)"
        )


if __name__ == "__main__":
    main()
