"""Moving through a trace: the visible window, neighbours, parents, children, flows, search."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from ..analysis.steps import profiled_window, step_windows
from ..trace import Trace
from .rows import DisplayRow, RowSlices

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


def caused_work(trace: Trace, row: int) -> list[int]:
    """The GPU work that the launches inside slice `row` (itself included) started, by start."""
    s = trace.slices
    lane = trace.lane_of(row)
    src = trace.launches.src
    inside = (
        (src >= lane.lo)
        & (src < lane.hi)
        & (s.start[src] >= s.start[row])
        & (s.end[src] <= s.end[row])
    )
    work = np.unique(trace.launches.dst[inside])
    return [int(w) for w in work[np.lexsort((work, s.start[work]))]]


# A cluster of slices this far (as a share of the span) from the rest, holding at most this
# share of the slices, is left out of the home view: a few stray events must not squeeze the
# rest into one column.
STRAY_GAP = 0.5
STRAY_SHARE = 0.05


def within(window: tuple[int, int], bounds: tuple[int, int]) -> tuple[int, int]:
    """`window` narrowed to at most `bounds`' width and moved inside them."""
    width = min(window[1] - window[0], bounds[1] - bounds[0])
    start = min(max(window[0], bounds[0]), bounds[1] - width)
    return start, start + width


def home_window(trace: Trace) -> tuple[int, int]:
    """What `0` fits: the profiled steps (with the GPU work they launched), else the bulk of
    the slices, leaving out small clusters far from the rest."""
    span = max(trace.span_ns, 1)
    if step_windows(trace):
        t0, t1 = profiled_window(trace)
        return fit(t0, t1 - t0, span)
    s = trace.slices
    if len(s) == 0:
        return 0, span
    order = np.argsort(s.start, kind="stable")
    start, end = s.start[order], s.end[order]
    reach = np.maximum.accumulate(end)
    breaks = np.flatnonzero(start[1:] > reach[:-1]) + 1  # a cluster starts at each
    lo, hi = 0, len(order)  # the slices kept, by start
    while True:
        inner = breaks[(breaks > lo) & (breaks < hi)]
        if len(inner) == 0:
            break
        t0, t1 = int(start[lo]), int(reach[hi - 1])
        gap = start[inner] - reach[inner - 1]
        k = int(np.argmax(gap))
        cut = int(inner[k])
        if gap[k] < STRAY_GAP * (t1 - t0):
            break
        if cut - lo <= STRAY_SHARE * len(order):
            lo = cut
        elif hi - cut <= STRAY_SHARE * len(order):
            hi = cut
        else:
            break
    t0, t1 = int(start[lo]), int(reach[hi - 1])
    return fit(t0, t1 - t0, span)


def rise_window(
    ts: npt.NDArray[np.int64], values: npt.NDArray[np.float64], peak_ts: int, span: int
) -> tuple[int, int] | None:
    """A window showing a counter's climb to its peak at `peak_ts`: from the last sample
    before it that was at most halfway up (from its lowest before the peak), as much again
    after the peak. None when no earlier sample was lower (the series starts at its peak)."""
    k = int(np.searchsorted(ts, peak_ts, side="left"))  # the samples before the peak
    if k == 0:
        return None
    top = float(values[k]) if k < len(values) else float(values[k - 1])
    half = (float(values[:k].min()) + top) / 2
    low = np.flatnonzero(values[:k] <= half)
    if len(low) == 0:
        return None
    rise = int(ts[low[-1]])
    width = max(peak_ts - rise, MIN_WINDOW_NS)
    return clamp_window(rise - width / 2, peak_ts + width, span)


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


def _by_start(trace: Trace, rows: Iterable[int]) -> list[int]:
    return sorted({int(r) for r in rows}, key=lambda r: (int(trace.slices.start[r]), r))


def linked_forward(trace: Trace, row: int) -> list[int]:
    """Where the slice's flows lead: a launch's GPU work, or any flow's destination, by start."""
    return _by_start(trace, [*launched_work(trace, row), *flows_forward(trace, row)])


def linked_back(trace: Trace, row: int) -> list[int]:
    """Where the slice's flows come from: the launch of GPU work, or any flow's source."""
    launch = launch_of_work(trace, row)
    return _by_start(trace, [*([launch] if launch >= 0 else []), *flows_back(trace, row)])


def launched_work(trace: Trace, row: int) -> list[int]:
    """The GPU work a launch call started (not other flows), by start."""
    return _by_start(trace, trace.launches.dst[trace.launches.src == row])


def launch_of_work(trace: Trace, row: int) -> int:
    """The launch call that started this GPU work, -1 for none."""
    found = trace.launches.src[trace.launches.dst == row]
    return int(found[0]) if len(found) else -1


def flows_forward(trace: Trace, row: int) -> list[int]:
    """Where the slice's other flows lead (autograd's forward -> backward, user flows)."""
    return _by_start(trace, trace.flows.dst[trace.flows.src == row])


def flows_back(trace: Trace, row: int) -> list[int]:
    """Where the slice's other flows come from."""
    return _by_start(trace, trace.flows.src[trace.flows.dst == row])


def search(trace: Trace, text: str) -> npt.NDArray[np.int64]:
    """Slices whose name contains `text` (case-insensitive), by start time."""
    needle = text.casefold()
    if not needle:
        return np.zeros(0, np.int64)
    ids = [i for i, name in enumerate(trace.names) if needle in name.casefold()]
    rows = np.flatnonzero(np.isin(trace.slices.name, ids)).astype(np.int64)
    return rows[np.lexsort((rows, trace.slices.start[rows]))]


def row_move(rows: list[DisplayRow], cursor: int, delta: int) -> int | None:
    """The display row `delta` rows away (1 or -1) that holds slices or a counter, skipping
    process headers; None at the end."""
    target = cursor
    while 0 <= target + delta < len(rows):
        target += delta
        if rows[target].lane >= 0 or rows[target].counter >= 0:
            return target
    return None


def lane_move(rows: list[DisplayRow], cursor: int, delta: int) -> int | None:
    """The first row of the next (1) or previous (-1) lane, or None at the end."""
    here = rows[cursor].lane if rows else -1
    target = cursor
    while 0 <= target + delta < len(rows):
        target += delta
        row = rows[target]
        if row.lane >= 0 and row.lane != here and row.level == 0:
            return target
    return None


def first_inside(trace: Trace, row: RowSlices, holder: int) -> int:
    """The first slice of `row` (the row below `holder`'s) that starts inside `holder`, -1."""
    s = trace.slices
    k = int(np.searchsorted(row.start, s.start[holder]))
    start, end = int(s.start[holder]), int(s.end[holder])
    if k < len(row.rows) and (row.start[k] < end or row.start[k] == start):
        return int(row.rows[k])
    return -1


def holder(trace: Trace, row: RowSlices, held: int) -> int:
    """The slice of `row` (the row above `held`'s) under which `held` starts, -1."""
    t = int(trace.slices.start[held])
    k = int(np.searchsorted(row.start, t, side="right")) - 1
    return int(row.rows[k]) if k >= 0 and (row.end[k] > t or row.start[k] == t) else -1


def focus_time(trace: Trace, selected: int, window: tuple[int, int]) -> int:
    """The time that row moves keep: the view's centre, held inside the selected slice (so a
    move from a slice wider than the view lands on what is in view, not near its far middle)."""
    centre = (window[0] + window[1]) // 2
    if selected < 0:
        return centre
    start = int(trace.slices.start[selected])
    return min(max(centre, start), start + max(int(trace.slices.dur[selected]) - 1, 0))


def sibling(row: RowSlices, selected: int, delta: int, window: tuple[int, int]) -> int:
    """The slice `delta` places from `selected` on its row (-1 when there is none).

    With no selection on this row (`selected` is -1 or elsewhere), the first slice from the
    view's start going right, or the last before the view's end going left.
    """
    if len(row.rows) == 0:
        return -1
    k = int(np.searchsorted(row.rows, selected))
    if k < len(row.rows) and int(row.rows[k]) == selected:
        k += delta
    elif delta > 0:
        k = int(np.searchsorted(row.start, window[0]))
    else:
        k = int(np.searchsorted(row.start, window[1])) - 1
    return int(row.rows[k]) if 0 <= k < len(row.rows) else -1


def next_match(
    trace: Trace, matches: npt.NDArray[np.int64], selected: int, delta: int, view_start: int
) -> int:
    """The match `delta` from the selected one, cycling; from the view's start when the
    selection is not a match. -1 without matches."""
    if len(matches) == 0:
        return -1
    where = np.flatnonzero(matches == selected)
    if len(where):
        k = int(where[0]) + delta
    else:
        starts = trace.slices.start[matches]
        k = int(np.searchsorted(starts, view_start)) - (1 if delta < 0 else 0)
    return int(matches[k % len(matches)])


def first_match_from(trace: Trace, matches: npt.NDArray[np.int64], view_start: int) -> int:
    """The first match at or after the view's start (cycling to the first); -1 without any."""
    if len(matches) == 0:
        return -1
    k = int(np.searchsorted(trace.slices.start[matches], view_start))
    return int(matches[k % len(matches)])
