"""Timeline: CPU and GPU lanes over time, flown with the keyboard and the mouse.

The GPU streams holding work are pinned above the rest (which scroll), and CPU lanes with
Python frames start folded (see present/rows.py), so that the first screen of any trace shows
the GPU and the threads launching its work.

The Timeline is the controller: it takes the keys and the mouse, owns the selection
(timeline_selection.py), the window and the lanes' shapes (timeline_scene.py), and after
each change hands its LaneCanvas (lane_canvas.py), which only draws, a View of them.
"""

from __future__ import annotations

from typing import ClassVar, Generic, TypeAlias, TypeVar, cast

import numpy as np
import numpy.typing as npt
from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.strip import Strip
from textual.widget import Widget

from tui.model.analysis.gaps import Gaps
from tui.model.present import navigate as nav
from tui.model.present.raster import slice_at
from tui.model.present.rows import FOLDED, FULL, DisplayRow, LaneRows
from tui.model.text import shown
from tui.model.trace import Trace
from tui.screens.error import guarded
from tui.widgets import timeline_keys as keys
from tui.widgets import timeline_messages as messages
from tui.widgets import timeline_moves as moves
from tui.widgets.lane_canvas import LaneCanvas
from tui.widgets.timeline_range import RangeMarker, range_said
from tui.widgets.timeline_scene import Scene
from tui.widgets.timeline_selection import Selection
from tui.widgets.timeline_view import View

ZOOM_STEP = 0.5
SAID_CHARS = 160  # a message about a key: two lines of a narrow screen at most
T = TypeVar("T")


class Via(Generic[T]):
    """A read-only attribute that is a part's: `Via("canvas", "cells_width")`."""

    def __init__(self, part: str, name: str) -> None:
        self.part, self.name = part, name

    def __get__(self, owner: object, kind: type | None = None) -> T:
        if owner is None:  # looked up on the class
            return cast(T, self)
        return cast(T, getattr(getattr(owner, self.part), self.name))

    def __set__(self, owner: object, value: T) -> None:  # never shadowed by an instance's
        raise AttributeError(f"{self.name} is the {self.part}'s: change it there")


class Timeline(Widget, can_focus=True):
    """The lanes, with keys to move, select, follow flows, search and measure."""

    DEFAULT_CSS = """
    Timeline { width: 1fr; height: 1fr; }
    Timeline > LaneCanvas { width: 1fr; height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = keys.BINDINGS

    SelectionChanged: TypeAlias = messages.SelectionChanged
    WindowChanged: TypeAlias = messages.WindowChanged

    def __init__(self, trace: Trace, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.scene = Scene(trace)
        self.selection = Selection()
        self.range = RangeMarker()
        self.window = nav.home_window(trace)
        self.cursor = self.scene.first_row()  # display row
        self.searched = ""  # the last search's text
        self.matches = np.zeros(0, np.int64)
        self._match_mask: npt.NDArray[np.bool_] | None = None
        self._pins_fitted = False  # the default pins are fitted to the first height seen
        self.gap_step = -1  # `g`: the last idle gap gone to, in largest_first order
        self.h_from: tuple[int, int] | None = None  # (lane, level) `h` goes back to
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

    # Read by the app, the panes and the tests: the scene's parts, the selection, and the
    # canvas's geometry (the ruler's cells are the canvas's).
    trace: Via[Trace] = Via("scene", "trace")
    lanes: Via[LaneRows] = Via("scene", "lanes")
    rows: Via[list[DisplayRow]] = Via("scene", "rows")
    pinned: Via[tuple[int, ...]] = Via("scene", "pinned")
    pinned_rows: Via[int] = Via("scene", "pinned_rows")
    kinds: Via[npt.NDArray[np.int8]] = Via("scene", "kinds")
    gaps: Via[Gaps] = Via("scene", "gaps")
    marked: Via[tuple[int, int] | None] = Via("range", "marked")  # the measured range
    selected: Via[int] = Via("selection", "slice")  # slice row, -1 for none
    selected_gap: Via[int] = Via("selection", "gap")
    partners: Via[list[int]] = Via("selection", "partners")
    draw_width: Via[int] = Via("canvas", "draw_width")
    view_height: Via[int] = Via("canvas", "view_height")
    gutter_width: Via[int] = Via("canvas", "gutter_width")
    cells_width: Via[int] = Via("canvas", "cells_width")
    fixed_rows: Via[int] = Via("canvas", "fixed_rows")

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
        self.after_selection()

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
        self.after_selection()

    def after_selection(self) -> None:
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
            self.show_match(first)
        return len(self.matches)

    def match_position(self) -> tuple[int, int]:
        """(k, n): the selection is match k (from 1) of n; k is 0 when it is none of them."""
        where = np.flatnonzero(self.matches == self.selected)
        return (int(where[0]) + 1 if len(where) else 0), len(self.matches)

    def show_match(self, row: int) -> None:
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

    # What the window and movement keys do is in timeline_keys.py, beside their bindings.
    action_zoom = keys.zoom
    action_pan = keys.pan
    action_fit_home = keys.fit_home
    action_fit_all = keys.fit_all
    action_fit_selection = keys.fit_selection
    action_move_row = keys.move_row
    action_move_lane = keys.move_lane
    action_gpu_and_back = keys.gpu_and_back
    action_sibling = keys.sibling
    action_child = keys.child
    action_parent = keys.parent
    action_follow = keys.follow
    action_match = keys.match
    action_next_gap = keys.next_gap
    action_peak_memory = keys.peak_memory

    def cursor_row(self) -> DisplayRow:
        """The row under the cursor (a blank header row when the trace has no rows at all)."""
        return self.rows[self.cursor] if self.rows else DisplayRow(-1, -1, 0)

    def _cursor_lane(self) -> int:
        row = self.cursor_row()
        if row.lane < 0:
            self.say(
                "Move to a lane's row first (up/down)." if self.rows else "This trace has no lanes."
            )
        return row.lane

    def relabel(self) -> None:
        """The bars and the details again, after the names' form changed (`M`)."""
        self.scene.relabel()
        self.after_selection()

    def _reshaped(self, lane: int) -> None:
        """After a lane's shape or pin changed: keep the selection, or where it is hidden now,
        select what is drawn over it (the collapsed stretch, the innermost frame)."""
        self.selection.reshaped(self.scene)
        self.scene.relayout()
        if self.selected >= 0:
            self.cursor = self.scene.row_index(self.selected)
        else:
            self.cursor = self.scene.row_of.get((lane, 0), 0)
        self.after_selection()

    @guarded
    def action_toggle_lane(self) -> None:
        lane = self._cursor_lane()
        if lane >= 0:
            self.scene.toggle_collapsed(lane)
            self._reshaped(lane)

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
        if lane >= 0:
            self.say(self.scene.toggle_pinned(lane))
            self._reshaped(lane)

    @guarded
    def action_mark_range(self) -> None:
        """Add the selection (else the view's centre) to the range being measured."""
        s, gaps, middle = self.trace.slices, self.gaps, sum(self.window) // 2
        here = (
            (int(s.start[self.selected]), int(s.end[self.selected]))
            if self.selected >= 0
            else (int(gaps.start[self.selected_gap]), int(gaps.end[self.selected_gap]))
            if self.selected_gap >= 0
            else (middle, middle)
        )
        changed, said = self.range.point(here)
        if changed:
            self._window_changed()
        self.say(said)

    @guarded
    def action_clear_range(self) -> None:
        said = self.range.clear()
        if said:
            self.say(said)
        self._window_changed()

    def set_marked(self, marked: tuple[int, int] | None) -> None:
        self.range.marked = marked
        self._window_changed()
        if marked is not None:
            self.say(range_said(marked))

    # The canvas scrolls: its keys are passed on (SkipAction, where it cannot, passes them up).
    def action_scroll_home(self) -> None:
        self.canvas.action_scroll_home()

    def action_scroll_end(self) -> None:
        self.canvas.action_scroll_end()

    def action_page_up(self) -> None:
        self.canvas.action_page_up()

    def action_page_down(self) -> None:
        self.canvas.action_page_down()

    # --- mouse (on the canvas; its events bubble here, in the canvas's coordinates) ---------

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self.range.press(event.x, self.gutter_width)

    def on_mouse_up(self, event: events.MouseUp) -> None:
        across = self.range.release(event.x, self.gutter_width)
        if across is not None:
            self.set_marked((self.time_at(across[0]), self.time_at(across[1])))

    @guarded
    def on_click(self, event: events.Click) -> None:
        if self.range.dragged:
            self.range.dragged = False
            return
        index = self.row_at(event.y)
        if index < 0 or self.rows[index].lane < 0:
            return
        row = self.rows[index]
        if event.x < self.gutter_width:
            self.cursor = index
            self.after_selection()
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
