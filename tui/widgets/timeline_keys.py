"""The Timeline's keys (Perfetto's where it has them), declared once: the help and the
footer read them from here; and what the window and movement keys do, as functions of the
Timeline that are its actions (`Timeline.action_zoom = zoom`). Where each leads is worked out
in timeline_moves.py; here it is applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType

from tui.model.analysis.graphs import graphs, replay_of
from tui.model.present import navigate as nav
from tui.model.present.names import shown_names
from tui.model.present.raster import slice_at
from tui.model.present.rows import COLLAPSED
from tui.model.text import printable
from tui.screens.error import guarded
from tui.widgets import timeline_moves as moves

if TYPE_CHECKING:
    from tui.widgets.timeline import Timeline

BINDINGS: list[BindingType] = [
    Binding("w", "zoom(0.5)", "Zoom in", show=False),
    Binding("s", "zoom(2.0)", "Zoom out", show=False),
    Binding("a", "pan(-0.25)", "Pan left", show=False),
    Binding("d", "pan(0.25)", "Pan right", show=False),
    Binding("0", "fit_home", "Fit the steps", show=False),
    Binding("right_parenthesis", "fit_all", "Fit the whole file", show=False),
    Binding("f", "fit_selection", "Fit slice"),
    Binding("up,k", "move_row(-1)", "Row up", show=False),
    Binding("down,j", "move_row(1)", "Row down", show=False),
    Binding("K", "move_lane(-1)", "Previous lane", show=False),
    Binding("J", "move_lane(1)", "Next lane", show=False),
    Binding("h", "gpu_and_back", "GPU/CPU"),
    Binding("left,comma", "sibling(-1)", "Previous slice", show=False),
    Binding("right,full_stop", "sibling(1)", "Next slice", show=False),
    Binding("enter", "child", "First child", show=False),
    Binding("backspace", "parent", "Parent", show=False),
    Binding(
        "right_square_bracket", "follow(True)", "Follow flow (op: its first kernel)", show=False
    ),
    Binding("left_square_bracket", "follow(False)", "Flow back", show=False),
    Binding("n", "match(1)", "Next match", show=False),
    Binding("N", "match(-1)", "Previous match", show=False),
    Binding("g", "next_gap", "Next idle gap"),
    Binding("c", "toggle_lane", "Collapse lane", show=False),
    Binding("e", "toggle_python", "Python frames of the lane", show=False),
    Binding("p", "toggle_pin", "Pin lane", show=False),
    Binding("r", "mark_range", "Mark range", show=False),
    Binding("R", "clear_range", "Clear range", show=False),
    Binding("m", "peak_memory", "Peak memory", show=False),
    # The canvas's vertical scrolling keys (Textual's, as a ScrollView has them), passed to it
    # (it never scrolls sideways: ctrl+pageup and ctrl+pagedown did nothing, and do nothing).
    Binding("home", "scroll_home", show=False),
    Binding("end", "scroll_end", show=False),
    Binding("pageup", "page_up", show=False),
    Binding("pagedown", "page_down", show=False),
]


@guarded
def zoom(t: Timeline, factor: float) -> None:
    centre = moves.zoom_centre(t.trace, t.selected, t.window)
    window = nav.zoom(t.window, factor, centre, t.trace.span_ns)
    if window == t.window:
        t.say("Zoomed in as far as it goes." if factor < 1 else "The whole trace is shown.")
    t.set_window(window)


@guarded
def pan(t: Timeline, fraction: float) -> None:
    window = nav.pan(t.window, fraction, t.trace.span_ns)
    if window == t.window:
        t.say("At the end of the trace." if fraction > 0 else "At the start of the trace.")
    t.set_window(window)


@guarded
def fit_home(t: Timeline) -> None:
    window = nav.home_window(t.trace)
    if window == t.window:
        t.say("Already showing the steps (or the bulk of the trace); ) for all of it.")
    t.set_window(window)


@guarded
def fit_all(t: Timeline) -> None:
    window = (0, max(t.trace.span_ns, 1))
    if window == t.window:
        t.say("Already showing the whole file.")
    t.set_window(window)


@guarded
def fit_selection(t: Timeline) -> None:
    if t.selected >= 0:
        s = t.trace.slices
        t.set_window(nav.fit(int(s.start[t.selected]), int(s.dur[t.selected]), t.trace.span_ns))
    elif t.selected_gap >= 0:
        t.select_gap(t.selected_gap)
    else:
        t.say("Nothing selected to fit: select a slice or a gap first.")


def go_to_row(t: Timeline, target: int) -> None:
    """Move the cursor to a display row, selecting the slice nearest in time there."""
    row = t.rows[target]
    if row.lane < 0 and row.counter < 0:
        return
    if row.counter < 0:
        t0, t1 = t.window
        at = nav.focus_time(t.trace, t.selected, t.window)
        found = slice_at(t.lanes.get(row.lane, row.level), at, tolerance=t1 - t0)
        if found >= 0:
            t.select(found)  # nearest the view's centre: in view, else panned to
            return
    t.cursor = target
    t.selection.clear()
    t.after_selection()
    if row.counter < 0:
        t.say("Nothing on this row in view (left/right find its slices).")


@guarded
def move_row(t: Timeline, delta: int) -> None:
    target = nav.row_move(t.rows, t.cursor, delta)
    if target is None:
        t.say("No more rows " + ("below." if delta > 0 else "above."))
        return
    go_to_row(t, target)


@guarded
def move_lane(t: Timeline, delta: int) -> None:
    target = nav.lane_move(t.rows, t.cursor, delta)
    if target is None:
        t.say("No more lanes " + ("below." if delta > 0 else "above."))
        return
    go_to_row(t, target)


def go(t: Timeline, move: moves.Move) -> None:
    if move.slice >= 0:
        t.select(move.slice)
    elif move.row >= 0:
        go_to_row(t, move.row)
    if move.said:
        t.say(move.said)


@guarded
def gpu_and_back(t: Timeline) -> None:
    """From a CPU row to the GPU (the selection's kernels, else the first GPU lane), and
    from the GPU back (to the selected work's launch, else where `h` came from)."""
    row = t.cursor_row()
    if row.lane >= 0 and not t.scene.is_gpu(row.lane):
        t.h_from = (row.lane, row.level)
    go(t, moves.gpu_and_back(t.scene, row, t.selected, t.h_from))


@guarded
def sibling(t: Timeline, delta: int) -> None:
    go(t, moves.sibling(t.scene, t.cursor_row(), t.selected, delta, t.window))


@guarded
def child(t: Timeline) -> None:
    if t.selected >= 0 and t.lanes.mode(t.trace.lane_of(t.selected).index) == (COLLAPSED):
        if not len(nav.children(t.trace, t.selected)):
            t.say("This slice has nothing under it.")
            return
        t.scene.expand(t.trace.lane_of(t.selected).index, t.selected)
        t.select(t.selected)
    go(t, moves.child(t.scene, t.selected))


@guarded
def parent(t: Timeline) -> None:
    go(t, moves.parent(t.scene, t.selected))


@guarded
def follow(t: Timeline, forward: bool) -> None:
    if forward and t.selected >= 0 and into_graph_replay(t):
        return
    go(t, moves.follow(t.trace, t.selected, forward))


def into_graph_replay(t: Timeline) -> bool:
    """`]` on a CUDA graph launch: its first kernel, with every kernel of the replay as the
    matches that n and N walk."""
    found = graphs(t.trace)
    at = replay_of(found, t.selected)
    if at is None or at[2] >= 0:
        return False
    replay = found.replays[at[0]]
    t.set_matches(replay.work)
    t.select(int(replay.work[0]))
    label = found.graphs[replay.graph].label
    t.say(f"{label}: kernel 1 of {len(replay.work):,} of this replay; n, N walk them")
    return True


@guarded
def match(t: Timeline, delta: int) -> None:
    found = nav.next_match(t.trace, t.matches, t.selected, delta, t.window[0])
    if found < 0:
        t.say(
            f"No slice name contains {printable(t.searched)!r}: / to search again."
            if t.searched
            else "No search yet: press / to search slice names."
        )
        return
    t.show_match(found)
    k, n = t.match_position()
    t.say(f"match {k:,} of {n:,}: {shown_names(t.trace).of(found)}")


@guarded
def next_gap(t: Timeline) -> None:
    order = t.scene.gap_order
    if not len(order):
        t.say("No idle gaps: this trace has no GPU work, or it never idles.")
        return
    t.gap_step = (t.gap_step + 1) % len(order)
    t.select_gap(int(order[t.gap_step]))


@guarded
def peak_memory(t: Timeline) -> None:
    """Select the op running when allocated memory peaked (GPU first), and show it."""
    peak = moves.peak_memory(t.scene, t.window)
    if peak is None:
        t.say("This trace has no memory records (profile with profile_memory=True).")
        return
    if peak.op >= 0:
        t.select(peak.op, reveal=False)
    t.set_window(peak.window)
    row = next((i for i, r in enumerate(t.rows) if r.counter == peak.counter >= 0), -1)
    if row >= 0:  # its memory row on screen too, the op's kept when both cannot be
        t.canvas.scroll_to_row(row)
        t.canvas.scroll_to_row(t.cursor)
    t.say(peak.said)
