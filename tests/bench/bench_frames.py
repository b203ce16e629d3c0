"""Key-to-frame latency of the timeline on a big synthetic trace, driven headless with Pilot.

Latency is from the key press to the moment the last timeline line of the frame it causes has
been painted by Textual's compositor (`render_line` is wrapped to record when it returns), so it
includes dispatch, the action, messages and the screen refresh, but not Pilot's own waiting after
the frame. Each sample also checks that a full frame was painted. Measured at full zoom-out and
zoomed in to one profiler step.

With `--deep-stack STEPS` the trace is instead tests/deep_stack.py's with_stack trace (kernels
under 40 levels of Python frames, folded by default) with that many steps (30000: about 1M
slices), zoomed in to one step for the second state.

Usage: python tests/bench/bench_frames.py [--events 1000000] [--presses 40] [--size 200x50]
       [--deep-stack STEPS]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_load import trace_file

KEYS_OUT = ["w", "s", "right", "right", "left", "down", "up", "J", "K"]
KEYS_IN = ["w", "s", "a", "d", "d", "a", "right", "left", "down", "up", "h", "h", "J", "K"]


async def measure(path: Path, presses: int, size: tuple[int, int]) -> dict[str, list[float]]:
    from tui.cli import make_app
    from tui.model.present import navigate as nav
    from tui.widgets.timeline import Timeline

    app = make_app(path)
    results: dict[str, list[float]] = {}
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        timeline = app.query_one(Timeline)
        # The compositor paints the widget drawing the lines: the Timeline's canvas (before
        # issue 28 the Timeline itself).
        painter = getattr(timeline, "canvas", timeline)
        painted: list[float] = []
        render_line = painter.render_line

        def timed_render_line(y: int):  # type: ignore[no-untyped-def]
            strip = render_line(y)
            painted.append(time.perf_counter())
            return strip

        painter.render_line = timed_render_line

        async def frame(key: str) -> float:
            painted.clear()
            start = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            if len(painted) < painter.size.height:
                raise RuntimeError(f"{key!r} painted {len(painted)} lines, not a whole frame")
            return (painted[-1] - start) * 1000

        for label, keys in (("full zoom-out", KEYS_OUT), ("one step", KEYS_IN)):
            if label == "one step":
                trace = timeline.trace
                step = next(
                    r
                    for r in range(len(trace.slices))
                    if trace.slice_name(r) == "ProfilerStep#10" and trace.lane_of(r).kind == "cpu"
                )
                timeline.set_window(
                    nav.fit(
                        int(trace.slices.start[step]), int(trace.slices.dur[step]), trace.span_ns
                    )
                )
                await pilot.pause()
            else:
                timeline.action_fit_all()
            times = []
            for i in range(presses):
                times.append(await frame(keys[i % len(keys)]))
            results[label] = times
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--presses", type=int, default=40)
    parser.add_argument("--size", default="200x50")
    parser.add_argument("--deep-stack", type=int, default=0, metavar="STEPS")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    if args.deep_stack:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from tests.deep_stack import write_deep_stack

        folder = Path(tempfile.mkdtemp(prefix="bench-deep-"))
        path = write_deep_stack(folder / "deep_stack.json", steps=args.deep_stack)
    else:
        path = trace_file(args.events)
    results = asyncio.run(measure(path, args.presses, (width, height)))
    what = f"deep stack, {args.deep_stack} steps" if args.deep_stack else f"{args.events} events"
    print(f"{what}, terminal {width}x{height}, {args.presses} presses per state")
    for label, times in results.items():
        ordered = sorted(times)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        print(
            f"  {label:<14} median {statistics.median(times):6.1f} ms   p95 {p95:6.1f} ms   "
            f"max {max(times):6.1f} ms"
        )


if __name__ == "__main__":
    main()
