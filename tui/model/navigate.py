"""Moving through a trace: the visible window, neighbours, parents, children, flows, search."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .trace import Trace

MIN_WINDOW_NS = 10
FIT_MARGIN = 0.1  # `f` leaves this much of the slice's length free on each side


def clamp_window(t0: float, t1: float, span: int) -> tuple[int, int]:
    """Keep a window inside [0, span] (shifting, not shrinking, when it can) and not too small."""
    if t1 - t0 < MIN_WINDOW_NS:
        middle = (t0 + t1) / 2
        t0, t1 = middle - MIN_WINDOW_NS / 2, middle + MIN_WINDOW_NS / 2
    total = max(span, MIN_WINDOW_NS)
    width = min(t1 - t0, total)
    start = min(max(t0, 0), total - width)
    return round(start), round(start + width)


def zoom(
    window: tuple[int, int], factor: float, center: float | None, span: int
) -> tuple[int, int]:
    """Scale the window by `factor` (0.5 zooms in) keeping `center` where it is on screen."""
    t0, t1 = window
    c = (t0 + t1) / 2 if center is None else min(max(center, t0), t1)
    return clamp_window(c - (c - t0) * factor, c + (t1 - c) * factor, span)


def pan(window: tuple[int, int], fraction: float, span: int) -> tuple[int, int]:
    """Move the window by `fraction` of its width (negative is left)."""
    t0, t1 = window
    shift = (t1 - t0) * fraction
    return clamp_window(t0 + shift, t1 + shift, span)


def fit(start: int, dur: int, span: int) -> tuple[int, int]:
    """A window showing [start, start + dur) with a margin."""
    margin = max(dur * FIT_MARGIN, MIN_WINDOW_NS / 2)
    return clamp_window(start - margin, start + dur + margin, span)


def children(trace: Trace, row: int) -> npt.NDArray[np.int64]:
    """Direct children of a slice, by start."""
    lane = trace.lane_of(row)
    local = np.flatnonzero(trace.slices.parent[lane.lo : lane.hi] == row)
    return (local + lane.lo).astype(np.int64)


def ancestors(trace: Trace, row: int) -> list[int]:
    """The chain of enclosing slices, innermost first."""
    chain = []
    parent = int(trace.slices.parent[row])
    while parent >= 0:
        chain.append(parent)
        parent = int(trace.slices.parent[parent])
    return chain


def linked_forward(trace: Trace, row: int) -> list[int]:
    """Where the slice's flows lead: a launch's GPU work, or any flow's destination, by start."""
    out = [int(d) for links in (trace.launches, trace.flows) for d in links.dst[links.src == row]]
    return sorted(set(out), key=lambda r: (int(trace.slices.start[r]), r))


def linked_back(trace: Trace, row: int) -> list[int]:
    """Where the slice's flows come from: the launch of GPU work, or any flow's source."""
    out = [int(s) for links in (trace.launches, trace.flows) for s in links.src[links.dst == row]]
    return sorted(set(out), key=lambda r: (int(trace.slices.start[r]), r))


def search(trace: Trace, text: str) -> npt.NDArray[np.int64]:
    """Slices whose name contains `text` (case-insensitive), by start time."""
    needle = text.casefold()
    if not needle:
        return np.zeros(0, np.int64)
    ids = [i for i, name in enumerate(trace.names) if needle in name.casefold()]
    rows = np.flatnonzero(np.isin(trace.slices.name, ids)).astype(np.int64)
    return rows[np.lexsort((rows, trace.slices.start[rows]))]
