"""Timeline: CPU and GPU lanes over time, flown with the keyboard and the mouse.

The GPU streams holding work are pinned above the rest (which scroll), and CPU lanes with
Python frames start folded (see present/rows.py), so that the first screen of any trace shows
the GPU and the threads launching its work.

The Timeline is the controller: it takes the keys and the mouse, owns the selection
(timeline_selection.py), the window and the lanes' shapes (timeline_scene.py), and after
each change hands its LaneCanvas (lane_canvas.py), which only draws, a View of them.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from tui.model.analysis.gaps import Gaps
from tui.model.analysis.graphs import graphs, replay_of
from tui.model.present import navigate as nav
from tui.model.present.raster import slice_at
from tui.model.present.rows import COLLAPSED, FOLDED, FULL, LaneRows, Row
from tui.model.text import printable, shown
from tui.model.timescale import format_duration, format_time
from tui.model.trace import Trace
from tui.widgets import timeline_moves as moves
from tui.widgets.error_screen import guarded
from tui.widgets.lane_canvas import LaneCanvas
from tui.widgets.timeline_scene import Scene
from tui.widgets.timeline_selection import Selection
from tui.widgets.timeline_view import View

ZOOM_STEP = 0.5
SAID_CHARS = 160  # a message about a key: two lines of a narrow screen at most


class Timeline(Widget, can_focus=True):
    """The lanes, with keys to move, select, follow flows, search and measure."""

    DEFAULT_CSS = """
    Timeline { width: 1fr; height: 1fr; }
    Timeline > LaneCanvas { width: 1fr; height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
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
        # The canvas's scrolling keys (Textual's, as a ScrollView has them), passed to it.
        Binding("home", "scroll_home", show=False),
        Binding("end", "scroll_end", show=False),
        Binding("pageup", "page_up", show=False),
        Binding("pagedown", "page_down", show=False),
        Binding("ctrl+pageup", "page_left", show=False),
        Binding("ctrl+pagedown", "page_right", show=False),
    ]

    class SelectionChanged(Message, namespace="timeline"):
        """Posted when the selected slice, idle gap or counter row changes.

        Attributes:
            slice: the selected slice row, or -1.
            gap: the selected idle gap (into idle_gaps(trace)), or -1.
            counter: the counter under the cursor (into counter_series(trace)), or -1.
            window: the view's time window (ns).
        """

        def __init__(self, slice: int, gap: int, counter: int, window: tuple[int, int]) -> None:
            super().__init__()
            self.slice, self.gap, self.counter, self.window = slice, gap, counter, window

    class WindowChanged(Message, namespace="timeline"):
        """Posted when the visible time window, the gutter or the marked range changes."""

        def __init__(
            self, window: tuple[int, int], gutter: int, marked: tuple[int, int] | None
        ) -> None:
            super().__init__()
            self.window, self.gutter, self.marked = window, gutter, marked

    def __init__(self, trace: Trace, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.scene = Scene(trace)
        self.selection = Selection()
        self.window = nav.home_window(trace)
        self.cursor = self.scene.first_row()  # display row
        self.marked: tuple[int, int] | None = None  # the measured range
        self.searched = ""  # the last search's text
        self.matches = np.zeros(0, np.int64)
        self._match_mask: npt.NDArray[np.bool_] | None = None
        self._pins_fitted = False  # the default pins are fitted to the first height seen
        self._gap_step = -1
        self._cpu_row: tuple[int, int] | None = None  # (lane, level) `h` goes back to
        self._before_collapse: dict[int, str] = {}  # lane: its shape before `c`
        self._mark_from: tuple[int, int] | None = None
        self._drag_x: int | None = None
        self._dragged = False  # the click ending a drag must not also select
        self._saying: str | None = None  # what the key being handled will say
        self.canvas = LaneCanvas(self.scene, self._view())

    def compose(self) -> ComposeResult:
        yield self.canvas

    # --- what the canvas shows, and the scene's parts callers read --------------------------

    def _view(self) -> View:
        sel = self.selection
        return View(
            self.window,
            self.cursor,
            sel.slice,
            sel.gap,
            tuple(sel.partners),
            frozenset(sel.partner_rows),
            self._match_mask,
        )

    def _show(self) -> None:
        self.canvas.show(self._view())

    @property
    def trace(self) -> Trace:
        return self.scene.trace

    @property
    def lanes(self) -> LaneRows:
        return self.scene.lanes

    @property
    def rows(self) -> list[Row]:
        return self.scene.rows

    @property
    def pinned(self) -> tuple[int, ...]:
        return self.scene.pinned

    @property
    def pinned_rows(self) -> int:
        return self.scene.pinned_rows

    @property
    def kinds(self) -> npt.NDArray[np.int8]:
        return self.scene.kinds

    @property
    def gaps(self) -> Gaps:
        return self.scene.gaps

    @property
    def selected(self) -> int:
        """The selected slice row, -1 for none."""
        return self.selection.slice

    @property
    def selected_gap(self) -> int:
        return self.selection.gap

    @property
    def partners(self) -> list[int]:
        return self.selection.partners

    # The canvas's geometry, which the app's ruler and the tests read through the Timeline.
    @property
    def draw_width(self) -> int:
        return self.canvas.draw_width

    @property
    def view_height(self) -> int:
        return self.canvas.view_height

    @property
    def gutter_width(self) -> int:
        return self.canvas.gutter_width

    @property
    def cells_width(self) -> int:
        return self.canvas.cells_width

    @property
    def fixed_rows(self) -> int:
        return self.canvas.fixed_rows

    def row_at(self, y: int) -> int:
        return self.canvas.row_at(y)

    def time_at(self, x: int) -> int:
        return self.canvas.time_at(x)

    def render_line(self, y: int) -> Strip:
        """Line `y` as the canvas draws it."""
        return self.canvas.render_line(y)

    def on_lane_canvas_area_changed(self, message: LaneCanvas.AreaChanged) -> None:
        message.stop()
        if message.resized and not self._pins_fitted and self.canvas.size.height > 0:
            self._pins_fitted = True
            self.scene.fit_pins(self.canvas.view_height)
            self.cursor = self.scene.first_row()
            self._show()
            if self.cursor >= self.canvas.view_height - 2:  # scrolled to: its lane on top
                self.canvas.scroll_to(
                    y=self.cursor - self.canvas.fixed_rows, animate=False, force=True
                )
        self._window_changed()

    def _window_changed(self) -> None:
        self.post_message(self.WindowChanged(self.window, self.gutter_width, self.marked))

    # --- state changes --------------------------------------------------------------------

    def set_window(self, window: tuple[int, int]) -> None:
        if window != self.window:
            self._hush()
            self.window = window
            self._show()
            self._window_changed()

    def _relayout(self) -> None:
        self.scene.relayout()
        self._show()

    def select(self, slice_row: int, *, reveal: bool = True) -> None:
        """Select a slice (-1 for none), move the row cursor to it and bring it into view."""
        if slice_row >= 0:
            self.scene.show_row_of(slice_row)
        self.selection.take_slice(self.scene, slice_row)
        if slice_row >= 0:
            self.cursor = self.scene.row_index(slice_row)
            self._show()
            if reveal:
                window = moves.reveal(self.trace, self.window, slice_row, self.partners)
                if window is not None:
                    self.set_window(window)
        self._after_selection()

    def select_gap(self, gap: int) -> None:
        self.selection.take_gap(gap)
        gaps = self.gaps
        work = int(gaps.next_work[gap])
        self.scene.show_row_of(work)
        lane = int(gaps.lane[gap])
        level = self.scene.gap_row(lane)
        self.cursor = self.scene.row_of[(lane, level if level >= 0 else self.lanes.level_of(work))]
        self._show()
        start, end = int(gaps.start[gap]), int(gaps.end[gap])
        self.set_window(nav.fit(start, end - start, self.trace.span_ns))
        self._after_selection()

    def _after_selection(self) -> None:
        self._hush()
        # Only the rows holding the old and new selection (or cursor) change: the strip cache
        # is keyed on those, so everything else is a cache hit.
        self._show()
        self.canvas.scroll_to_row(self.cursor)
        # After a relayout the scroll range grows only on the next refresh: scroll again then.
        self.call_after_refresh(self.canvas.scroll_to_row, self.cursor)
        row = self.rows[self.cursor] if self.rows else None
        counter = row.counter if row is not None else -1
        self.post_message(
            self.SelectionChanged(self.selected, self.selected_gap, counter, self.window)
        )

    def set_search(self, text: str) -> int:
        """Highlight slices whose name contains `text`; select the first match from the view's
        start. Returns the number of matches."""
        self.searched = text
        self.set_matches(nav.search(self.trace, text))
        first = nav.first_match_from(self.trace, self.matches, self.window[0])
        if first >= 0:
            self._show_match(first)
        return len(self.matches)

    def match_position(self) -> tuple[int, int]:
        """(k, n): the selection is match k (from 1) of n; k is 0 when it is none of them."""
        where = np.flatnonzero(self.matches == self.selected)
        return (int(where[0]) + 1 if len(where) else 0), len(self.matches)

    def _show_match(self, row: int) -> None:
        """Select a match, zoomed in until it is wide enough to see."""
        self.select(row)
        window = moves.match_window(self.trace, self.window, row, self.cells_width)
        if window is not None:
            self.set_window(window)

    def set_matches(self, rows: npt.NDArray[np.int64]) -> None:
        """Highlight these slices (sorted by start); `n`/`N` walk them."""
        self.matches = rows
        if len(rows):
            mask = np.zeros(len(self.trace.slices), bool)
            mask[rows] = True
            self._match_mask = mask
        else:
            self._match_mask = None
        self._show()

    def show_longest(self, rows: npt.NDArray[np.int64]) -> None:
        """Select the longest of these slices and fit the view to it."""
        if len(rows):
            longest = int(rows[np.argmax(self.trace.slices.dur[rows])])
            self.select(longest)
            self.action_fit_selection()

    def say(self, text: str) -> None:
        """One line about a key that had nothing to do, or what it did. Shown once the key is
        handled, in place of what was shown before: the last thing said wins, and pressing a
        key again does not pile messages up."""
        if self._saying is None:
            self.call_after_refresh(self._said)
        self._saying = text

    def _said(self) -> None:
        text, self._saying = self._saying, None
        self.app.clear_notifications()
        if text is not None:  # a kernel's mangled name would cover the screen: its start
            self.notify(shown(text, SAID_CHARS), timeout=3, markup=False)

    def _hush(self) -> None:
        """A key did something: what an earlier one said no longer applies."""
        if self._saying is None:
            self.app.clear_notifications()

    # --- actions --------------------------------------------------------------------------

    @guarded
    def action_zoom(self, factor: float) -> None:
        centre = moves.zoom_centre(self.trace, self.selected, self.window)
        window = nav.zoom(self.window, factor, centre, self.trace.span_ns)
        if window == self.window:
            self.say("Zoomed in as far as it goes." if factor < 1 else "The whole trace is shown.")
        self.set_window(window)

    @guarded
    def action_pan(self, fraction: float) -> None:
        window = nav.pan(self.window, fraction, self.trace.span_ns)
        if window == self.window:
            self.say("At the end of the trace." if fraction > 0 else "At the start of the trace.")
        self.set_window(window)

    @guarded
    def action_fit_home(self) -> None:
        window = nav.home_window(self.trace)
        if window == self.window:
            self.say("Already showing the steps (or the bulk of the trace); ) for all of it.")
        self.set_window(window)

    @guarded
    def action_fit_all(self) -> None:
        window = (0, max(self.trace.span_ns, 1))
        if window == self.window:
            self.say("Already showing the whole file.")
        self.set_window(window)

    @guarded
    def action_fit_selection(self) -> None:
        if self.selected >= 0:
            s = self.trace.slices
            self.set_window(
                nav.fit(int(s.start[self.selected]), int(s.dur[self.selected]), self.trace.span_ns)
            )
        elif self.selected_gap >= 0:
            self.select_gap(self.selected_gap)
        else:
            self.say("Nothing selected to fit: select a slice or a gap first.")

    def _go_to_row(self, target: int) -> None:
        """Move the cursor to a display row, selecting the slice nearest in time there."""
        row = self.rows[target]
        if row.lane < 0 and row.counter < 0:
            return
        if row.counter < 0:
            t0, t1 = self.window
            t = nav.focus_time(self.trace, self.selected, self.window)
            found = slice_at(self.lanes.get(row.lane, row.level), t, tolerance=t1 - t0)
            if found >= 0:
                self.select(found, reveal=False)
                return
        self.cursor = target
        self.selection.clear()
        self._after_selection()
        if row.counter < 0:
            self.say("Nothing on this row in view (left/right find its slices).")

    @guarded
    def action_move_row(self, delta: int) -> None:
        target = nav.row_move(self.rows, self.cursor, delta)
        if target is None:
            self.say("No more rows " + ("below." if delta > 0 else "above."))
            return
        self._go_to_row(target)

    @guarded
    def action_move_lane(self, delta: int) -> None:
        target = nav.lane_move(self.rows, self.cursor, delta)
        if target is None:
            self.say("No more lanes " + ("below." if delta > 0 else "above."))
            return
        self._go_to_row(target)

    @guarded
    def action_gpu_and_back(self) -> None:
        """From a CPU row to the GPU (the selection's kernels, else the first GPU lane), and
        from the GPU back (to the selected work's launch, else where `h` came from)."""
        row = self._cursor_row()
        if row.lane >= 0 and self.scene.is_gpu(row.lane):
            back = nav.launch_of_work(self.trace, self.selected) if self.selected >= 0 else -1
            if back >= 0:
                self.select(back)
            elif self._cpu_row is not None and self._cpu_row in self.scene.row_of:
                self._go_to_row(self.scene.row_of[self._cpu_row])
            else:
                self.say("No CPU row to go back to: select a kernel with a launch.")
            return
        if row.lane >= 0:
            self._cpu_row = (row.lane, row.level)
        work = nav.caused_work(self.trace, self.selected) if self.selected >= 0 else []
        if work:
            self.select(work[0])
            return
        gpu = next((r.lane for r in self.rows if r.lane >= 0 and self.scene.is_gpu(r.lane)), None)
        if gpu is None:
            self.say("This trace has no GPU lane.")
        else:  # its row of work, not of annotations
            self._go_to_row(self.scene.row_of[(gpu, max(self.scene.gap_row(gpu), 0))])

    @guarded
    def action_sibling(self, delta: int) -> None:
        row = self._cursor_row()
        if row.lane < 0:
            self.say("Move to a lane's row first (up/down).")
            return
        found = nav.sibling(self.lanes.get(row.lane, row.level), self.selected, delta, self.window)
        if found >= 0:
            self.select(found)
        else:
            self.say(
                "No more slices on this row " + ("to the right." if delta > 0 else "to the left.")
            )

    @guarded
    def action_child(self) -> None:
        if self.selected < 0:
            self.say("Select a slice first (left/right, or click).")
            return
        lane = self.trace.lane_of(self.selected).index
        if self.lanes.mode(lane) == COLLAPSED:
            if not len(nav.children(self.trace, self.selected)):
                self.say("This slice has nothing under it.")
                return
            self.lanes.modes[lane] = self._expanded_mode(lane)
            self._relayout()
            if self.lanes.level_of(self.selected) < 0:
                self.lanes.modes[lane] = FULL
                self._relayout()
            self.select(self.selected)
        found = moves.child(self.scene, self.selected)
        if found >= 0:
            self.select(found)
        else:
            self.say("This slice has nothing under it.")

    @guarded
    def action_parent(self) -> None:
        if self.selected < 0:
            self.say("Select a slice first (left/right, or click).")
            return
        found = moves.parent(self.scene, self.selected)
        if found >= 0:
            self.select(found)
        else:
            self.say("This slice is at the top of its lane.")

    @guarded
    def action_follow(self, forward: bool) -> None:
        if self.selected < 0:
            self.say("Select a launch, a kernel or an op first.")
            return
        if forward and self._into_graph_replay():
            return
        linked = moves.followed(self.trace, self.selected, forward)
        if linked:
            self.select(linked[0])
        else:
            self.say(
                "No flow from this slice, and nothing under it launched GPU work."
                if forward
                else "No flow leads to this slice."
            )

    def _into_graph_replay(self) -> bool:
        """`]` on a CUDA graph launch: its first kernel, with every kernel of the replay as the
        matches that n and N walk."""
        found = graphs(self.trace)
        at = replay_of(found, self.selected)
        if at is None or at[2] >= 0:
            return False
        replay = found.replays[at[0]]
        self.set_matches(replay.work)
        self.select(int(replay.work[0]))
        label = found.graphs[replay.graph].label
        self.say(f"{label}: kernel 1 of {len(replay.work):,} of this replay; n, N walk them")
        return True

    @guarded
    def action_match(self, delta: int) -> None:
        found = nav.next_match(self.trace, self.matches, self.selected, delta, self.window[0])
        if found < 0:
            self.say(
                f"No slice name contains {printable(self.searched)!r}: / to search again."
                if self.searched
                else "No search yet: press / to search slice names."
            )
            return
        self._show_match(found)
        k, n = self.match_position()
        self.say(f"match {k:,} of {n:,}: {self.trace.slice_name(found)}")

    @guarded
    def action_next_gap(self) -> None:
        order = self.scene.gap_order
        if not len(order):
            self.say("No idle gaps: this trace has no GPU work, or it never idles.")
            return
        self._gap_step = (self._gap_step + 1) % len(order)
        self.select_gap(int(order[self._gap_step]))

    @guarded
    def action_peak_memory(self) -> None:
        """Select the op running when allocated memory peaked (GPU first), and show it."""
        peak = moves.peak_memory(self.scene, self.window)
        if peak is None:
            self.say("This trace has no memory records (profile with profile_memory=True).")
            return
        if peak.op >= 0:
            self.select(peak.op, reveal=False)
        self.set_window(peak.window)
        row = next((i for i, r in enumerate(self.rows) if r.counter == peak.counter >= 0), -1)
        if row >= 0:  # its memory row on screen too, the op's kept when both cannot be
            self.canvas.scroll_to_row(row)
            self.canvas.scroll_to_row(self.cursor)
        self.say(peak.said)

    def _cursor_row(self) -> Row:
        """The row under the cursor (a blank header row when the trace has no rows at all)."""
        return self.rows[self.cursor] if self.rows else Row(-1, -1, 0)

    def _cursor_lane(self) -> int:
        row = self._cursor_row()
        if row.lane < 0:
            self.say(
                "Move to a lane's row first (up/down)." if self.rows else "This trace has no lanes."
            )
        return row.lane

    def _reshaped(self, lane: int) -> None:
        """After a lane's shape or pin changed: keep the selection, or where it is hidden now,
        select what is drawn over it (the collapsed stretch, the innermost frame)."""
        self.selection.reshaped(self.scene)
        self.scene.relayout()
        if self.selected >= 0:
            self.cursor = self.scene.row_index(self.selected)
        else:
            self.cursor = self.scene.row_of.get((lane, 0), 0)
        self._after_selection()

    @guarded
    def action_toggle_lane(self) -> None:
        lane = self._cursor_lane()
        if lane < 0:
            return
        if self.lanes.mode(lane) == COLLAPSED:
            self.lanes.modes[lane] = self._expanded_mode(lane)
        else:
            self._before_collapse[lane] = self.lanes.mode(lane)
            self.lanes.modes[lane] = COLLAPSED
        self._reshaped(lane)

    def _expanded_mode(self, lane: int) -> str:
        """The shape a collapsed lane opens to: the one it had, else its default."""
        mode = self._before_collapse.pop(lane, self.lanes.default_mode(lane))
        return FULL if mode == COLLAPSED else mode

    @guarded
    def action_toggle_python(self) -> None:
        lane = self._cursor_lane()
        if lane < 0:
            return
        if not self.lanes.has_python(lane):
            self.say("This lane has no Python frames (record with with_stack=True).")
            return
        self.lanes.modes[lane] = FULL if self.lanes.mode(lane) == FOLDED else FOLDED
        self._reshaped(lane)
        self.say(
            "Python frames shown in full"
            if self.lanes.mode(lane) == FULL
            else "Python frames folded into one row"
        )

    @guarded
    def action_toggle_pin(self) -> None:
        lane = self._cursor_lane()
        if lane < 0:
            return
        name = self.trace.lanes[lane].name
        scene = self.scene
        if lane in scene.pinned:
            scene.pinned = tuple(p for p in scene.pinned if p != lane)
            process = self.trace.processes[self.trace.lanes[lane].process].name
            self.say(f"{name} unpinned: back in its place under {process}")
        else:
            scene.pinned = tuple(sorted((*scene.pinned, lane)))  # in the trace's lane order
            self.say(f"{name} pinned on top")
        self._reshaped(lane)

    @guarded
    def action_mark_range(self) -> None:
        """Add the selection (else the view's centre) to the range being measured."""
        s = self.trace.slices
        if self.selected >= 0:
            here = (int(s.start[self.selected]), int(s.end[self.selected]))
        elif self.selected_gap >= 0:
            here = (int(self.gaps.start[self.selected_gap]), int(self.gaps.end[self.selected_gap]))
        else:
            middle = sum(self.window) // 2
            here = (middle, middle)
        if self._mark_from is None:
            self._mark_from = here
            self.set_marked(here if here[1] > here[0] else None)
            self.say(
                f"Range from +{format_time(here[0])}: select another slice (or move) and press r "
                "again."
            )
            return
        lo, hi = min(self._mark_from[0], here[0]), max(self._mark_from[1], here[1])
        if hi <= lo:  # the same point twice
            self.say("A range needs two points apart: select another slice, or move, first.")
            return
        self._mark_from = None
        self.set_marked((lo, hi))

    @guarded
    def action_clear_range(self) -> None:
        self._mark_from = None
        if self.marked is None:
            self.say("No range marked: r marks one (or drag with the mouse).")
        self.set_marked(None)

    def set_marked(self, marked: tuple[int, int] | None) -> None:
        self.marked = marked
        self._window_changed()
        if marked is not None:
            a, b = marked
            self.say(f"Range {format_duration(b - a)}: +{format_time(a)} to +{format_time(b)}")

    # The canvas scrolls: its keys are passed on (SkipAction, where it cannot, passes them up).
    def action_scroll_home(self) -> None:
        self.canvas.action_scroll_home()

    def action_scroll_end(self) -> None:
        self.canvas.action_scroll_end()

    def action_page_up(self) -> None:
        self.canvas.action_page_up()

    def action_page_down(self) -> None:
        self.canvas.action_page_down()

    def action_page_left(self) -> None:
        self.canvas.action_page_left()

    def action_page_right(self) -> None:
        self.canvas.action_page_right()

    # --- mouse (on the canvas; its events bubble here, in the canvas's coordinates) ---------

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._drag_x = event.x if event.x >= self.gutter_width else None

    def on_mouse_up(self, event: events.MouseUp) -> None:
        start, self._drag_x = self._drag_x, None
        if start is None or abs(event.x - start) < 2 or event.x < self.gutter_width:
            return
        a = self.time_at(min(start, event.x) - self.gutter_width)
        b = self.time_at(max(start, event.x) - self.gutter_width)
        self._mark_from = None
        self.set_marked((a, b))
        self._dragged = True

    @guarded
    def on_click(self, event: events.Click) -> None:
        if self._dragged:
            self._dragged = False
            return
        index = self.row_at(event.y)
        if index < 0 or self.rows[index].lane < 0:
            return
        row = self.rows[index]
        if event.x < self.gutter_width:
            self.cursor = index
            self._after_selection()
            return
        t0, t1 = self.window
        cell_ns = max((t1 - t0) // self.cells_width, 1)
        found = slice_at(
            self.lanes.get(row.lane, row.level),
            self.time_at(event.x - self.gutter_width),
            tolerance=cell_ns,
        )
        if found >= 0:
            self.select(found, reveal=False)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        if event.ctrl or event.shift:
            self._zoom_at(event, 1 / ZOOM_STEP)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if event.ctrl or event.shift:
            self._zoom_at(event, ZOOM_STEP)

    def _zoom_at(self, event: events.MouseEvent, factor: float) -> None:
        x = event.x - self.gutter_width
        centre = self.time_at(x) if x >= 0 else None
        self.set_window(nav.zoom(self.window, factor, centre, self.trace.span_ns))
        event.stop()
