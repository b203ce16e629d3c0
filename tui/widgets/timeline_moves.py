"""Where the timeline's keys go: the windows and slices they lead to, worked out from the
scene, the selection and the window, with no widget (the Timeline applies them)."""

from __future__ import annotations

from dataclasses import dataclass

from tui.model.analysis.memory import peaks
from tui.model.present import navigate as nav
from tui.model.present.rows import DisplayRow
from tui.model.timescale import format_bytes
from tui.model.trace import Trace
from tui.widgets.timeline_scene import Scene

VISIBLE_CELLS = 8  # a search match narrower than 2 cells is zoomed to this many

Window = tuple[int, int]


def zoom_centre(trace: Trace, selected: int, window: Window) -> int | None:
    """What a zoom keeps in place: the selection's middle while it is in view."""
    if selected < 0:
        return None
    mid = int(trace.slices.start[selected]) + int(trace.slices.dur[selected]) // 2
    return mid if window[0] <= mid <= window[1] else None


def reveal(trace: Trace, window: Window, slice_row: int, partners: list[int]) -> Window | None:
    """The window that shows the slice, and its flow partners too when they fit: panned at
    the same zoom, or zoomed out to fit a slice out of view that is wider than the view; None
    when no change is needed (it is in view, or partly in view and wider than it)."""
    s = trace.slices
    t0, t1 = window
    width = t1 - t0
    start, end = int(s.start[slice_row]), int(s.end[slice_row])
    lo = min([start, *(int(s.start[p]) for p in partners)])
    hi = max([end, *(int(s.end[p]) for p in partners)])
    if lo >= t0 and hi <= t1:
        return None
    if hi - lo <= width * 0.9:  # both fit: centre the pair
        middle = (lo + hi) / 2
    elif end - start <= width * 0.9:  # the slice fits: centre it
        middle = (start + end) / 2
    elif end <= t0 or start >= t1:  # out of view and wider than it: zoom out to it
        return nav.fit(start, end - start, trace.span_ns)
    else:
        return None
    return nav.clamp_window(middle - width / 2, middle + width / 2, trace.span_ns)


def match_window(trace: Trace, window: Window, row: int, cells_width: int) -> Window | None:
    """The window showing a selected match wide enough to see: all of it when it is wider
    than the view, zoomed in on it when it is under 2 cells; None when it is fine as it is."""
    dur = int(trace.slices.dur[row])
    t0, t1 = window
    if dur > t1 - t0:
        return nav.fit(int(trace.slices.start[row]), dur, trace.span_ns)
    if dur > 0 and dur * cells_width < 2 * (t1 - t0):
        width = max(dur * cells_width / VISIBLE_CELLS, nav.MIN_WINDOW_NS)
        middle = int(trace.slices.start[row]) + dur / 2
        return nav.clamp_window(middle - width / 2, middle + width / 2, trace.span_ns)
    return None


@dataclass(frozen=True)
class Move:
    """Where a key leads: a slice to select, else a display row to go to; and what to say."""

    slice: int = -1
    row: int = -1
    said: str = ""


SELECT_FIRST = "Select a slice first (left/right, or click)."


def gpu_and_back(
    scene: Scene, row: DisplayRow, selected: int, cpu_row: tuple[int, int] | None
) -> Move:
    """`h`: from a CPU row to the GPU (the selection's kernels, else the first GPU lane's row
    of work), and from the GPU back (to the selected work's launch, else to `cpu_row`)."""
    trace = scene.trace
    if row.lane >= 0 and scene.is_gpu(row.lane):
        back = nav.launch_of_work(trace, selected) if selected >= 0 else -1
        if back >= 0:
            return Move(slice=back)
        if cpu_row is not None and cpu_row in scene.row_of:
            return Move(row=scene.row_of[cpu_row])
        return Move(said="No CPU row to go back to: select a kernel with a launch.")
    work = nav.caused_work(trace, selected) if selected >= 0 else []
    if work:
        return Move(slice=work[0])
    gpu = next((r.lane for r in scene.rows if r.lane >= 0 and scene.is_gpu(r.lane)), None)
    if gpu is None:
        return Move(said="This trace has no GPU lane.")
    return Move(row=scene.row_of[(gpu, max(scene.gap_row(gpu), 0))])  # its work, not annotations


def sibling(scene: Scene, row: DisplayRow, selected: int, delta: int, window: Window) -> Move:
    """Left and right: the next slice along the cursor's row."""
    if row.lane < 0:
        return Move(said="Move to a lane's row first (up/down).")
    found = nav.sibling(scene.lanes.get(row.lane, row.level), selected, delta, window)
    if found >= 0:
        return Move(slice=found)
    return Move(
        said="No more slices on this row " + ("to the right." if delta > 0 else "to the left.")
    )


def child(scene: Scene, selected: int) -> Move:
    """Enter: the first slice drawn under the selection on the next row of its lane."""
    if selected < 0:
        return Move(said=SELECT_FIRST)
    lane = scene.trace.lane_of(selected).index
    level = scene.lanes.level_of(selected)
    found = (
        nav.first_inside(scene.trace, scene.lanes.get(lane, level + 1), selected)
        if level + 1 < scene.lanes.count(lane)
        else -1
    )
    return Move(slice=found) if found >= 0 else Move(said="This slice has nothing under it.")


def parent(scene: Scene, selected: int) -> Move:
    """Backspace: the slice drawn over the selection, else its parent (which may be folded
    away: selecting it opens its lane)."""
    if selected < 0:
        return Move(said=SELECT_FIRST)
    lane = scene.trace.lane_of(selected).index
    level = scene.lanes.level_of(selected)
    found = nav.holder(scene.trace, scene.lanes.get(lane, level - 1), selected) if level > 0 else -1
    if found < 0:
        found = int(scene.trace.slices.parent[selected])
    return Move(slice=found) if found >= 0 else Move(said="This slice is at the top of its lane.")


def follow(trace: Trace, selected: int, forward: bool) -> Move:
    """`]`: the work a launch started, else the kernels an op caused, else its flows; `[`:
    the launch of a kernel, else the flows leading to it."""
    if selected < 0:
        return Move(said="Select a launch, a kernel or an op first.")
    if forward:
        linked = nav.launched_work(trace, selected) or (
            nav.caused_work(trace, selected) if trace.lane_of(selected).kind == "cpu" else []
        )
        linked = linked or nav.flows_forward(trace, selected)
    else:
        launch = nav.launch_of_work(trace, selected)
        linked = [launch] if launch >= 0 else nav.flows_back(trace, selected)
    if linked:
        return Move(slice=linked[0])
    if forward:
        return Move(said="No flow from this slice, and nothing under it launched GPU work.")
    return Move(said="No flow leads to this slice.")


@dataclass(frozen=True)
class PeakView:
    """Where `m` goes: the op running at the memory peak, the window, its memory counter."""

    op: int  # -1 when no op was running
    window: Window
    counter: int  # the peak's memory counter (into the scene's counters), -1 for none
    said: str


def peak_memory(scene: Scene, window: Window) -> PeakView | None:
    """The op running when allocated memory peaked (GPU first), shown on the climb to the
    peak; None when the trace has no memory records."""
    trace = scene.trace
    found = peaks(trace)
    if not found:
        return None
    peak = max(found, key=lambda p: (p.device != "cpu", p.allocated))
    counter = next(
        (i for i, c in enumerate(scene.counters) if c.name == f"{peak.device} allocated"), -1
    )
    shown = None
    if counter >= 0:  # the climb to the peak, not a flat stretch at its top
        series = scene.counters[counter]
        shown = nav.rise_window(series.ts, series.values, peak.ts, trace.span_ns)
    if shown is None and peak.op >= 0:  # no climb in the trace: the op allocating it
        s = trace.slices
        shown = nav.fit(int(s.start[peak.op]), int(s.dur[peak.op]), trace.span_ns)
    if shown is None:
        width = window[1] - window[0]
        shown = nav.clamp_window(peak.ts - width / 2, peak.ts + width / 2, trace.span_ns)
    said = f"Peak {peak.device}: {format_bytes(peak.allocated)} allocated"
    return PeakView(peak.op, shown, counter, said)
