"""Key latency of the panes (issue 30): from a key press to the first frame it painted, and to
the last once everything it started (threads included) is done, driven headless with Pilot.

A frame is an update the app hands its driver (`App._display` is wrapped to record when). The
keys, in order, from the timeline: `t` (stats pane), `x` (kernels), `x` (ops), `3` (sort by the
third column), `v` (next scope), `S` (by input shape: the shapes read in a thread), `S`,
`escape` (pane closed), `T` (call tree: built in a thread), `escape`, `H` (health), `escape`,
and with a second trace `D` (the diff pane) and `escape`.

Usage: python tests/bench/bench_keys.py [--events 1500000] [--size 160x45] [--trace PATH]
       [--new PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from bench_load import trace_file

KEYS = ["t", "x", "x", "3", "v", "S", "S", "escape", "T", "escape", "H", "escape"]
PAIR_KEYS = ["D", "escape"]


async def measure(
    path: Path, new: Path | None, size: tuple[int, int]
) -> list[tuple[str, float, float]]:
    from tui.cli import make_app

    app = make_app(path, new=new)
    frames: list[float] = []
    display = app._display

    def timed(screen, renderable):  # type: ignore[no-untyped-def]
        display(screen, renderable)
        if renderable is not None:
            frames.append(time.perf_counter())

    app._display = timed  # type: ignore[method-assign]
    out = []
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        for key in KEYS + (PAIR_KEYS if new is not None else []):
            frames.clear()
            start = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            first = frames[0] if frames else start
            await app.workers.wait_for_complete()
            await pilot.pause()
            last = frames[-1] if frames else start
            out.append((key, (first - start) * 1000, (last - start) * 1000))
            assert not app.shown_errors, app.shown_errors
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_500_000)
    parser.add_argument("--size", default="160x45")
    parser.add_argument("--trace", type=Path, help="a real trace instead of the synthetic one")
    parser.add_argument("--new", type=Path, help="a second trace: the pair's diff pane too")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    path = args.trace or trace_file(args.events)
    results = asyncio.run(measure(path, args.new, (width, height)))
    print(f"{path.name}, terminal {width}x{height}")
    print("  key       first frame   all done")
    for key, first, last in results:
        print(f"  {key:8} {first:9.1f} ms {last:9.1f} ms")


if __name__ == "__main__":
    main()
