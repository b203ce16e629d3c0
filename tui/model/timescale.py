"""Durations and time rulers in units that read well: ns, us, ms, s."""

from __future__ import annotations

import math

_UNITS = (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1))


def format_duration(ns: float) -> str:
    """812 ns, 4.2 us, 13.5 ms, 2.01 s: three significant digits in the largest fitting unit."""
    value = float(ns)
    for unit, size in _UNITS:
        if abs(value) >= size or size == 1:
            scaled = value / size
            if size == 1:
                return f"{scaled:.0f} ns"
            return f"{scaled:.3g} {unit}" if abs(scaled) < 100 else f"{scaled:.0f} {unit}"
    raise AssertionError("unreachable")


def tick_step(span_ns: float, width: int, min_gap: int = 12) -> int:
    """A 1-2-5 step (ns) giving ticks at least `min_gap` columns apart."""
    if span_ns <= 0 or width <= 0:
        return 1
    raw = span_ns * min_gap / width
    exponent = 10 ** math.floor(math.log10(max(raw, 1)))
    for mult in (1, 2, 5, 10):
        if mult * exponent >= raw:
            return max(int(mult * exponent), 1)
    return int(10 * exponent)


def format_time(ns: int) -> str:
    """A time from the trace start, exact to the ns where it has them: `723.412345 ms`,
    `1.204 s`, `15 us` (at least three decimals in ms and s, so that close times differ)."""
    unit, size = next((u, z) for u, z in _UNITS if abs(ns) >= z or z == 1)
    decimals = {1: 0, 1_000: 3, 1_000_000: 6, 1_000_000_000: 9}[size]
    text = f"{ns / size:.{decimals}f}" if decimals else str(ns)
    if "." in text:
        whole, frac = text.split(".")
        frac = frac.rstrip("0").ljust(3 if size >= 1_000_000 else 0, "0")
        text = f"{whole}.{frac}" if frac else whole
    return f"{text} {unit}"


def ticks(t0: int, t1: int, width: int) -> list[tuple[int, str]]:
    """(column, label) for ruler ticks over [t0, t1) drawn `width` columns wide.

    Labels are times from the trace start in the unit of their size, with the decimals the
    step needs (`800 us`, `1.2 ms`). Deep in a long trace, where such labels would run to many
    digits, the first tick says where the view is (`606.150 ms`) and the others how far from it
    (`+2 us`).
    """
    if width <= 0 or t1 <= t0:
        return []
    step = tick_step(t1 - t0, width, min_gap=14)
    # Offsets are in the largest unit in which the step is a whole number: 20 us, 500 ns.
    unit, size = next((u, s) for u, s in _UNITS if step >= s)
    first = -(-t0 // step) * step
    offsets = first >= 1000 * step
    out = []
    t = first
    while t < t1:
        col = int((t - t0) * width // (t1 - t0))
        if not offsets or t == first:
            label = _anchor(t, step) if t else f"0 {unit}"
        else:
            label = f"+{(t - first) / size:.3f}".rstrip("0").rstrip(".") + f" {unit}"
        out.append((col, label))
        t += step
    return out


def _anchor(t: int, step: int) -> str:
    """`t` in the unit of its own size, with the decimals that `step` needs."""
    unit, size = next((u, s) for u, s in _UNITS if t >= s)
    decimals = max(0, math.ceil(math.log10(size / step))) if step < size else 0
    return f"{t / size:.{decimals}f} {unit}"


def format_bytes(n: float) -> str:
    """1.5 GiB, 32 KiB, -80 KiB, 8 B."""
    value = float(n)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(value) >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"
