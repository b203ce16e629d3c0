"""CPU, screen layouts and frames an app start costs on a small trace, and the stats pane's `t`:
what every Pilot test pays, and what a user's first screen and first pane cost over SSH.

Headless with Pilot, in one process, after two warm-up starts: from `make_app` to the trace
screen shown and idle, then from `t` to the pane built and idle. The layouts and frames are
counted by wrapping Textual's `Screen._refresh_layout` (of screens with widgets) and the
compositor's two render calls.
Run it with another build first on `PYTHONPATH` to compare.

Usage: python tests/bench/bench_open.py [--repeat 20] [--size 140x40] [TRACE]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
from collections import Counter
from pathlib import Path

from bench_load import ROOT


def cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def count_work(counts: Counter[str]) -> None:
    """Count Textual's layouts and full and partial frames into `counts`."""
    from textual import _compositor, screen

    def counted(cls: type, name: str, key: str) -> None:
        original = getattr(cls, name)

        def wrapper(self: object, *args: object, **kwargs: object) -> object:
            # Not the app's default screen's, which holds nothing here and costs nothing.
            if not isinstance(self, screen.Screen) or self.children:
                counts[key] += 1
            return original(self, *args, **kwargs)

        setattr(cls, name, wrapper)

    counted(screen.Screen, "_refresh_layout", "layouts")
    counted(_compositor.Compositor, "render_full_update", "full frames")
    counted(_compositor.Compositor, "render_partial_update", "partial frames")


async def measure(path: Path, repeat: int, size: tuple[int, int]) -> dict[str, list[float]]:
    from tui.cli import make_app

    counts: Counter[str] = Counter()
    count_work(counts)
    found: dict[str, list[float]] = {}

    def note(what: str, since: float, before: Counter[str], until: float, after: Counter[str]):
        found.setdefault(f"{what}: CPU ms", []).append((until - since) * 1000)
        for key in ("layouts", "full frames", "partial frames"):
            found.setdefault(f"{what}: {key}", []).append(after[key] - before[key])

    for run in range(repeat + 2):
        start, before = cpu_s(), Counter(counts)
        app = make_app(str(path))
        async with app.run_test(size=size) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            opened, at_t = cpu_s(), Counter(counts)
            await pilot.press("t")
            await app.workers.wait_for_complete()
            await pilot.pause()
            if run >= 2:  # the first two warm the imports and caches
                note("start", start, before, opened, at_t)
                note("t", opened, at_t, cpu_s(), Counter(counts))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", type=Path, default=ROOT / "tests/data/attribution.json")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--size", default="140x40")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))
    found = asyncio.run(measure(args.trace, args.repeat, (width, height)))
    for name, values in found.items():
        print(f"{name:28} median {statistics.median(values):7.1f}  min {min(values):7.1f}")


if __name__ == "__main__":
    main()
