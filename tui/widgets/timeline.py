"""Timeline: CPU and GPU lanes over time, drawn line by line, flown with the keyboard.

The GPU streams holding work are pinned above the rest (which scroll), and CPU lanes with
Python frames start folded (see present/rows.py), so that the first screen of any trace shows
the GPU and the threads launching its work.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from rich.cells import set_cell_size
from rich.segment import Segment
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.model.analysis.gaps import Gaps, idle_gaps, largest_first
from tui.model.analysis.memory import counter_series, peaks
from tui.model.present import navigate as nav
from tui.model.present.kinds import KINDS, slice_kinds
from tui.model.present.raster import gap_cells, rasterise, slice_at, sparkline
from tui.model.present.rows import COLLAPSED, FOLDED, FULL, LaneRows, Row, layout
from tui.model.text import printable, shown
from tui.model.timescale import format_bytes, format_duration, format_time
from tui.model.trace import Trace
from tui.widgets.error_screen import guarded
from tui.widgets.row_paint import Palette, clip, paint_cells

ZOOM_STEP = 0.5
LABEL_LIMIT = 300  # a bar never needs more of a name than a terminal is wide
CACHED_SCREENS = 4  # strips kept: this many screens' worth, least recently drawn dropped first
PINNED_SHARE = 0.5  # pinned lanes take at most this share of the rows by default
VISIBLE_CELLS = 8  # a search match narrower than 2 cells is zoomed to this many
WORK_KINDS = ("kernel", "memcpy", "memset", "comm")


class Timeline(ScrollView, can_focus=True):
    """Every lane of a trace as rows of bars, with the selection and idle gaps marked."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--gutter",
        "timeline--pinned",
        "timeline--process",
        "timeline--cursor",
        "timeline--selected",
        "timeline--partner",
        "timeline--match",
        "timeline--gap",
        "timeline--gap-device",
        "timeline--gap-selected",
        "timeline--counter",
        *(f"timeline--{kind}" for kind in KINDS),
    }
    DEFAULT_CSS = """
    Timeline { background: $surface; scrollbar-size-vertical: 1; }
    Timeline > .timeline--gutter { color: $text-muted; }
    Timeline > .timeline--pinned { color: $text; background: $boost; }
    Timeline > .timeline--process { color: $text; text-style: bold; }
    Timeline > .timeline--cursor { background: $accent; color: $text; text-style: bold; }
    Timeline > .timeline--selected { text-style: reverse bold; }
    Timeline > .timeline--partner { color: yellow; text-style: bold underline; }
    Timeline > .timeline--match { text-style: underline bold; }
    Timeline > .timeline--gap { color: $text-muted; }
    Timeline > .timeline--gap-device { color: red; }
    Timeline > .timeline--gap-selected { color: yellow; background: red; text-style: bold; }
    Timeline > .timeline--counter { color: darkcyan; }
    Timeline > .timeline--other { background: dimgray; color: white; }
    Timeline > .timeline--cpu_op { background: royalblue; color: white; }
    Timeline > .timeline--annotation { background: mediumpurple; color: white; }
    Timeline > .timeline--python { background: darkgray; color: black; }
    Timeline > .timeline--runtime { background: darkorange; color: black; }
    Timeline > .timeline--kernel { background: seagreen; color: white; }
    Timeline > .timeline--memcpy { background: goldenrod; color: black; }
    Timeline > .timeline--memset { background: darkkhaki; color: black; }
    Timeline > .timeline--comm { background: mediumvioletred; color: white; }
    Timeline > .timeline--gpu_annotation { background: rebeccapurple; color: white; }
    Timeline > .timeline--sync { background: indianred; color: black; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("w", "zoom(0.5)", "Zoom in"),
        Binding("s", "zoom(2.0)", "Zoom out"),
        Binding("a", "pan(-0.25)", "Pan left"),
        Binding("d", "pan(0.25)", "Pan right"),
        Binding("0", "fit_home", "Fit the steps", show=False),
        Binding("right_parenthesis", "fit_all", "Fit the whole file", show=False),
        Binding("f", "fit_selection", "Fit slice"),
        Binding("up,k", "move_row(-1)", "Row up", show=False),
        Binding("down,j", "move_row(1)", "Row down", show=False),
        Binding("K", "move_lane(-1)", "Previous lane", show=False),
        Binding("J", "move_lane(1)", "Next lane", show=False),
        Binding("h", "gpu_and_back", "GPU / CPU"),
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
    ]

    class SelectionChanged(Message):
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

    class WindowChanged(Message):
        """Posted when the visible time window, the gutter or the marked range changes."""

        def __init__(
            self, window: tuple[int, int], gutter: int, marked: tuple[int, int] | None
        ) -> None:
            super().__init__()
            self.window, self.gutter, self.marked = window, gutter, marked

    def __init__(self, trace: Trace, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.trace = trace
        self.lanes = LaneRows(trace)
        self.kinds = slice_kinds(trace)
        self.labels = [shown(n, LABEL_LIMIT) for n in trace.names]
        self.counters = counter_series(trace)
        self.gaps: Gaps = idle_gaps(trace)
        self.gap_order = largest_first(self.gaps)
        self._gap_step = -1
        self.pinned: tuple[int, ...] = tuple(
            lane.index for lane in trace.lanes if lane.kind == "gpu" and lane.slice_count
        )
        self.grouped: tuple[int, ...] = ()  # default pins that did not fit, drawn as one row
        self._pins_fitted = False  # the default pins are fitted to the first height seen
        self.rows: list[Row] = []
        self.pinned_rows = 0
        self._row_of: dict[tuple[int, int], int] = {}
        self.window = nav.home_window(trace)
        self.marked: tuple[int, int] | None = None  # the measured range
        self._mark_from: tuple[int, int] | None = None
        self._drag_x: int | None = None
        self._dragged = False  # the click ending a drag must not also select
        self.selected = -1  # slice row, -1 for none
        self.selected_gap = -1
        self.partners: list[int] = []  # what the selection's flows join it to
        self._partner_rows: set[tuple[int, int]] = set()
        self.cursor = 0  # display row
        self._cpu_row: tuple[int, int] | None = None  # (lane, level) `h` goes back to
        self._remembered = -1  # a selection hidden by a lane's shape, restored when drawn
        self.matches = np.zeros(0, np.int64)
        self._match_mask: npt.NDArray[np.bool_] | None = None
        self._strips: OrderedDict[tuple[int, int, int, bool, bool, int], Strip] = OrderedDict()
        self._palette_now: Palette | None = None
        self._gap_level: dict[int, int] = {}
        self._work_kinds = [KINDS.index(k) for k in WORK_KINDS]
        self._relayout()
        self.cursor = self._first_row()

    def _first_row(self) -> int:
        """Where the cursor starts: the thread launching the most GPU work, else the first
        lane under the pinned ones, else the first lane."""
        src = self.trace.launches.src
        if len(src):
            los = np.asarray([lane.lo for lane in self.trace.lanes])
            launcher = int(np.bincount(np.searchsorted(los, src, side="right") - 1).argmax())
            if (launcher, 0) in self._row_of:
                return self._row_of[(launcher, 0)]
        lanes = [i for i, r in enumerate(self.rows) if r.lane >= 0]
        return next((i for i in lanes if not self.rows[i].pinned), lanes[0] if lanes else 0)

    # --- geometry -------------------------------------------------------------------------

    @property
    def draw_width(self) -> int:
        """Columns drawn: the width less the vertical scrollbar's, which would hide them."""
        return max(self.scrollable_content_region.width, 1)

    @property
    def view_height(self) -> int:
        return max(self.scrollable_content_region.height, 1)

    @property
    def gutter_width(self) -> int:
        return min(32, max(12, self.draw_width // 5))

    @property
    def cells_width(self) -> int:
        return max(self.draw_width - self.gutter_width, 1)

    def time_at(self, x: int) -> int:
        """The time under column `x` of the cells area."""
        t0, t1 = self.window
        return int(t0 + (x + 0.5) * (t1 - t0) / self.cells_width)

    @property
    def fixed_rows(self) -> int:
        """Pinned rows held at the top: all of them, but never the whole view (the rest of
        the pinned rows then scroll with the others)."""
        return min(self.pinned_rows, max(self.view_height - 1, 0))

    def row_at(self, y: int) -> int:
        """The display row drawn on line `y` (pinned rows stay at the top), or -1."""
        index = y if y < self.fixed_rows else y + int(self.scroll_offset.y)
        return index if 0 <= index < len(self.rows) else -1

    def _relayout(self) -> None:
        self.grouped = tuple(g for g in self.grouped if g not in self.pinned)
        self.rows = layout(self.trace, self.lanes, self.pinned, self.grouped)
        self.pinned_rows = sum(1 for r in self.rows if r.pinned)
        self._row_of = {(r.lane, r.level): i for i, r in enumerate(self.rows) if r.lane >= 0}
        self.virtual_size = Size(0, len(self.rows))
        self._gap_level.clear()
        self._invalidate()

    def _fit_pins(self) -> None:
        """Keep the default pins to a share of the rows: fold pinned streams into one row
        each, then draw the last ones together in one row, until they fit. Done once; the user
        decides after."""
        budget = max(1, min(int(self.view_height * PINNED_SHARE), self.view_height - 1))
        if self.pinned_rows > budget:
            for lane in self.pinned:
                if self.lanes.count(lane) > 1:
                    self.lanes.modes[lane] = COLLAPSED
        pins = list(self.pinned)
        rest: list[int] = []
        while len(pins) > 1 and sum(self.lanes.count(p) for p in pins) + bool(rest) > budget:
            rest.insert(0, pins.pop())
        self.pinned, self.grouped = tuple(pins), tuple(rest)
        self._relayout()

    def _invalidate(self) -> None:
        self._strips.clear()
        self._palette_now = None  # styles are looked up once per repaint, not once per row
        self.refresh()

    def notify_style_update(self) -> None:
        """A theme or CSS change: strips painted with the old styles must not be reused."""
        super().notify_style_update()
        self._invalidate()

    def on_resize(self, event: events.Resize) -> None:
        if not self._pins_fitted and self.size.height > 0:
            self._pins_fitted = True
            self._fit_pins()
            self.cursor = self._first_row()
            if self.cursor >= self.view_height - 2:  # scrolled to: its lane on the top rows
                self.scroll_to(y=self.cursor - self.fixed_rows, animate=False, force=True)
        self._invalidate()
        self._window_changed()

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        """The scrollbar came or went (lanes expanded, folded or pinned): the cells area's
        width changed, and the ruler must follow it."""
        self._invalidate()
        self._window_changed()

    def _window_changed(self) -> None:
        self.post_message(self.WindowChanged(self.window, self.gutter_width, self.marked))

    # --- drawing --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.draw_width
        index = self.row_at(y)
        if index < 0 or width <= 0:
            return Strip.blank(width, self.rich_style)
        row = self.rows[index]
        mark = self.selected if self._row_holds(row, self.selected) else -1
        gap = self.selected_gap
        if gap >= 0 and row.lane >= 0 and self.trace.lanes[row.lane].kind == "gpu":
            mark = -2 - gap  # a device gap is drawn on every stream
        sticky = y == self.fixed_rows and y > 0 and row.level > 0
        partner = self.selected if (row.lane, row.level) in self._partner_rows else -1
        key = (index, width, mark, index == self.cursor, sticky, partner)
        strip = self._strips.get(key)
        if strip is not None:
            self._strips.move_to_end(key)
            return strip
        try:
            strip = self._paint(row, index == self.cursor, sticky)
        except Exception as error:  # drawn in the row itself: the rest still works
            text = f" cannot draw this row: {type(error).__name__}: {error}"
            strip = Strip([Segment(set_cell_size(printable(text), width), self.rich_style)])
        self._strips[key] = strip
        while len(self._strips) > CACHED_SCREENS * self.view_height:
            self._strips.popitem(last=False)
        return strip

    def _row_holds(self, row: Row, slice_row: int) -> bool:
        if slice_row < 0 or row.lane < 0:
            return False
        lane = self.trace.lanes[row.lane]
        return lane.lo <= slice_row < lane.hi and self.lanes.level_of(slice_row) == row.level

    def _paint(self, row: Row, is_cursor: bool, sticky: bool) -> Strip:
        gutter = self.gutter_width
        base = self.rich_style
        name = (
            "timeline--cursor"
            if is_cursor
            else "timeline--process"
            if row.lane < 0 and row.counter < 0
            else "timeline--pinned"
            if row.pinned
            else "timeline--gutter"
        )
        label = clip(self._label(row, sticky), gutter)
        segments = [Segment(label, base + self.get_component_rich_style(name))]
        width = self.draw_width
        if row.counter >= 0:
            series = self.counters[row.counter]
            spark, _ = sparkline(series.ts, series.values, *self.window, self.cells_width)
            style = base + self.get_component_rich_style("timeline--counter")
            segments.append(Segment(spark, style))
            return Strip(segments, width)
        t0, t1 = self.window
        if row.group:
            cells = rasterise(self.lanes.group(row.group), t0, t1, self.cells_width)
            palette = self._palette_now or self._palette()
            segments += paint_cells(
                cells,
                self.kinds,
                self.trace.slices.name,
                self.labels,
                palette,
                self.selected,
                self._match_mask,
                None,
                -1,
                self.partners,
                self.gaps.device_from,
            )
            return Strip(segments, width)
        if row.lane < 0:
            segments.append(Segment(" " * self.cells_width, base))
            return Strip(segments, width)
        cells = rasterise(self.lanes.get(row.lane, row.level), t0, t1, self.cells_width)
        gaps = (
            gap_cells(self.gaps, row.lane, t0, t1, self.cells_width, self.selected_gap)
            if row.level == self._gap_row(row.lane)
            else None
        )
        segments += paint_cells(
            cells,
            self.kinds,
            self.trace.slices.name,
            self.labels,
            self._palette_now or self._palette(),
            self.selected,
            self._match_mask,
            gaps,
            self.selected_gap,
            self.partners,
            self.gaps.device_from,
        )
        return Strip(segments, width)

    def _label(self, row: Row, sticky: bool) -> str:
        if row.counter >= 0:
            return f"   {printable(self.counters[row.counter].name)}"
        if row.group:
            return f" + {len(row.group)} streams"
        if row.lane < 0:
            return printable(self.trace.processes[row.process].name)
        lane = self.trace.lanes[row.lane]
        name = printable(lane.name)
        if row.pinned and len({self.trace.lanes[p].process for p in self.pinned}) > 1:
            name = f"{printable(self.trace.processes[lane.process].name)} {name}"
        if row.level > 0:
            return f" ↳ {name}" if sticky else ""
        mode = self.lanes.mode(row.lane)
        many = self.lanes.shape(row.lane, FULL).rows > 1
        mark = "▸" if mode == COLLAPSED else ("▾" if many else " ")
        return f" {mark} {name}"

    def _palette(self) -> Palette:
        style = self.get_component_rich_style
        self._palette_now = Palette(
            base=self.rich_style,
            kinds=[style(f"timeline--{kind}") for kind in KINDS],
            selected=style("timeline--selected"),
            partner=style("timeline--partner"),
            match=style("timeline--match"),
            gap=style("timeline--gap"),
            gap_device=style("timeline--gap-device"),
            gap_selected=style("timeline--gap-selected"),
        )
        return self._palette_now

    def _gap_row(self, lane: int) -> int:
        """The one row of a lane that idle gaps are drawn on: the one holding the most GPU
        work (-1 when none does: a CPU lane)."""
        found = self._gap_level.get(lane)
        if found is None:
            counts = [
                int(np.isin(self.kinds[self.lanes.get(lane, level).rows], self._work_kinds).sum())
                for level in range(self.lanes.count(lane))
            ]
            best = int(np.argmax(counts)) if counts else 0
            found = self._gap_level[lane] = best if counts and counts[best] else -1
        return found

    # --- state changes --------------------------------------------------------------------

    def set_window(self, window: tuple[int, int]) -> None:
        if window != self.window:
            self.window = window
            self._invalidate()
            self._window_changed()

    def _show_row_of(self, slice_row: int) -> None:
        """Make the slice's row drawn: expand its lane where its shape hides it."""
        lane = self.trace.lane_of(slice_row).index
        if self.lanes.level_of(slice_row) < 0:
            mode = self.lanes.mode(lane)
            self.lanes.modes[lane] = FOLDED if mode == COLLAPSED else FULL
            if self.lanes.level_of(slice_row) < 0:
                self.lanes.modes[lane] = FULL
            self._relayout()

    def select(self, slice_row: int, *, reveal: bool = True) -> None:
        """Select a slice (-1 for none), move the row cursor to it and bring it into view."""
        self.selected, self._remembered = slice_row, -1
        self.selected_gap = -1
        self.partners = []
        if slice_row >= 0:
            self._show_row_of(slice_row)
            lane = self.trace.lane_of(slice_row).index
            self.cursor = self._row_of[(lane, self.lanes.level_of(slice_row))]
            self.partners = nav.linked_forward(self.trace, slice_row) + nav.linked_back(
                self.trace, slice_row
            )
            if reveal:
                self._reveal(slice_row)
        self._mark_partner_rows()
        self._after_selection()

    def _mark_partner_rows(self) -> None:
        rows = set()
        for p in self.partners:
            level = self.lanes.level_of(p)
            if level >= 0:
                rows.add((self.trace.lane_of(p).index, level))
        self._partner_rows = rows

    def select_gap(self, gap: int) -> None:
        self.selected, self.selected_gap, self.partners = -1, gap, []
        self._partner_rows = set()
        work = int(self.gaps.next_work[gap])
        self._show_row_of(work)
        lane = int(self.gaps.lane[gap])
        level = self._gap_row(lane)
        self.cursor = self._row_of[(lane, level if level >= 0 else self.lanes.level_of(work))]
        start, end = int(self.gaps.start[gap]), int(self.gaps.end[gap])
        self.set_window(nav.fit(start, end - start, self.trace.span_ns))
        self._after_selection()

    def _after_selection(self) -> None:
        # Only the rows holding the old and new selection (or cursor) change: the strip cache
        # is keyed on those, so everything else is a cache hit.
        self.refresh()
        self.scroll_to_row(self.cursor)
        # After a relayout the scroll range grows only on the next refresh: scroll again then.
        self.call_after_refresh(self.scroll_to_row, self.cursor)
        row = self.rows[self.cursor] if self.rows else None
        counter = row.counter if row is not None else -1
        self.post_message(
            self.SelectionChanged(self.selected, self.selected_gap, counter, self.window)
        )

    def scroll_to_row(self, index: int) -> None:
        """Scroll so that display row `index` is on screen (held pinned rows always are)."""
        fixed = self.fixed_rows
        if index < fixed:
            return
        top = int(self.scroll_offset.y) + fixed
        height = max(self.view_height - fixed, 1)
        # Forced: right after a relayout the scrollbar may not be there yet.
        if index < top:
            self.scroll_to(y=index - fixed, animate=False, force=True)
        elif index >= top + height:
            self.scroll_to(y=index - fixed - height + 1, animate=False, force=True)

    def action_page_down(self) -> None:
        self.scroll_to(y=self.scroll_offset.y + self.view_height - self.fixed_rows, animate=False)

    def action_page_up(self) -> None:
        self.scroll_to(y=self.scroll_offset.y - self.view_height + self.fixed_rows, animate=False)

    def _reveal(self, slice_row: int) -> None:
        """Pan (keeping the zoom) so that the slice is on screen, and its flow partners too
        when they fit."""
        s = self.trace.slices
        t0, t1 = self.window
        width = t1 - t0
        start, end = int(s.start[slice_row]), int(s.end[slice_row])
        lo = min([start, *(int(s.start[p]) for p in self.partners)])
        hi = max([end, *(int(s.end[p]) for p in self.partners)])
        if lo >= t0 and hi <= t1:
            return
        if hi - lo <= width * 0.9:  # both fit: centre the pair
            middle = (lo + hi) / 2
        elif start + (end - start) < t0 or start > t1:
            middle = start
        else:
            return
        self.set_window(
            nav.clamp_window(middle - width / 2, middle + width / 2, self.trace.span_ns)
        )

    def set_search(self, text: str) -> int:
        """Highlight slices whose name contains `text`; select the first match from the view's
        start. Returns the number of matches."""
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
        dur = int(self.trace.slices.dur[row])
        t0, t1 = self.window
        if dur > t1 - t0:  # wider than the view: all of it
            self.set_window(nav.fit(int(self.trace.slices.start[row]), dur, self.trace.span_ns))
        elif dur > 0 and dur * self.cells_width < 2 * (t1 - t0):
            width = max(dur * self.cells_width / VISIBLE_CELLS, nav.MIN_WINDOW_NS)
            middle = int(self.trace.slices.start[row]) + dur / 2
            self.set_window(
                nav.clamp_window(middle - width / 2, middle + width / 2, self.trace.span_ns)
            )

    def set_matches(self, rows: npt.NDArray[np.int64]) -> None:
        """Highlight these slices (sorted by start); `n`/`N` walk them."""
        self.matches = rows
        if len(rows):
            mask = np.zeros(len(self.trace.slices), bool)
            mask[rows] = True
            self._match_mask = mask
        else:
            self._match_mask = None
        self._invalidate()

    def show_longest(self, rows: npt.NDArray[np.int64]) -> None:
        """Select the longest of these slices and fit the view to it."""
        if len(rows):
            longest = int(rows[np.argmax(self.trace.slices.dur[rows])])
            self.select(longest)
            self.action_fit_selection()

    def _say(self, text: str) -> None:
        """One line about a key that had nothing to do, or what it did; it replaces the one
        before, so that pressing a key again does not pile them up."""
        self.app.clear_notifications()
        self.notify(text, timeout=3, markup=False)

    # --- actions --------------------------------------------------------------------------

    @guarded
    def action_zoom(self, factor: float) -> None:
        center = None
        if self.selected >= 0:
            s = self.trace.slices
            mid = int(s.start[self.selected]) + int(s.dur[self.selected]) // 2
            if self.window[0] <= mid <= self.window[1]:
                center = mid
        window = nav.zoom(self.window, factor, center, self.trace.span_ns)
        if window == self.window:
            self._say("Zoomed in as far as it goes." if factor < 1 else "The whole trace is shown.")
        self.set_window(window)

    @guarded
    def action_pan(self, fraction: float) -> None:
        window = nav.pan(self.window, fraction, self.trace.span_ns)
        if window == self.window:
            self._say("At the end of the trace." if fraction > 0 else "At the start of the trace.")
        self.set_window(window)

    @guarded
    def action_fit_home(self) -> None:
        window = nav.home_window(self.trace)
        if window == self.window:
            self._say("Already showing the steps (or the bulk of the trace); ) for all of it.")
        self.set_window(window)

    @guarded
    def action_fit_all(self) -> None:
        window = (0, max(self.trace.span_ns, 1))
        if window == self.window:
            self._say("Already showing the whole file.")
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
            self._say("Nothing selected to fit: select a slice or a gap first.")

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
        self.selected, self.selected_gap, self.partners = -1, -1, []
        self._partner_rows = set()
        self._after_selection()
        if row.counter < 0:
            self._say("Nothing on this row in view (left/right find its slices).")

    @guarded
    def action_move_row(self, delta: int) -> None:
        target = nav.row_move(self.rows, self.cursor, delta)
        if target is None:
            self._say("No more rows " + ("below." if delta > 0 else "above."))
            return
        self._go_to_row(target)

    @guarded
    def action_move_lane(self, delta: int) -> None:
        target = nav.lane_move(self.rows, self.cursor, delta)
        if target is None:
            self._say("No more lanes " + ("below." if delta > 0 else "above."))
            return
        self._go_to_row(target)

    @guarded
    def action_gpu_and_back(self) -> None:
        """From a CPU row to the GPU (the selection's kernels, else the first GPU lane), and
        from the GPU back (to the selected work's launch, else where `h` came from)."""
        row = self._cursor_row()
        on_gpu = row.lane >= 0 and self.trace.lanes[row.lane].kind == "gpu"
        if on_gpu:
            back = nav.launch_of_work(self.trace, self.selected) if self.selected >= 0 else -1
            if back >= 0:
                self.select(back)
            elif self._cpu_row is not None and self._cpu_row in self._row_of:
                self._go_to_row(self._row_of[self._cpu_row])
            else:
                self._say("No CPU row to go back to: select a kernel with a launch.")
            return
        if row.lane >= 0:
            self._cpu_row = (row.lane, row.level)
        work = nav.caused_work(self.trace, self.selected) if self.selected >= 0 else []
        if work:
            self.select(work[0])
            return
        gpu = next(
            (
                i
                for i, r in enumerate(self.rows)
                if r.lane >= 0 and self.trace.lanes[r.lane].kind == "gpu"
            ),
            None,
        )
        if gpu is None:
            self._say("This trace has no GPU lane.")
        else:
            self._go_to_row(gpu)

    @guarded
    def action_sibling(self, delta: int) -> None:
        row = self._cursor_row()
        if row.lane < 0:
            self._say("Move to a lane's row first (up/down).")
            return
        found = nav.sibling(self.lanes.get(row.lane, row.level), self.selected, delta, self.window)
        if found >= 0:
            self.select(found)
        else:
            self._say(
                "No more slices on this row " + ("to the right." if delta > 0 else "to the left.")
            )

    @guarded
    def action_child(self) -> None:
        if self.selected < 0:
            self._say("Select a slice first (left/right, or click).")
            return
        lane = self.trace.lane_of(self.selected).index
        if self.lanes.mode(lane) == COLLAPSED:
            if not len(nav.children(self.trace, self.selected)):
                self._say("This slice has nothing under it.")
                return
            default = self.lanes.default_mode(lane)
            self.lanes.modes[lane] = FULL if default == COLLAPSED else default
            self._relayout()
            if self.lanes.level_of(self.selected) < 0:
                self.lanes.modes[lane] = FULL
                self._relayout()
            self.select(self.selected)
        level = self.lanes.level_of(self.selected)
        found = (
            nav.first_inside(self.trace, self.lanes.get(lane, level + 1), self.selected)
            if level + 1 < self.lanes.count(lane)
            else -1
        )
        if found >= 0:
            self.select(found)
        else:
            self._say("This slice has nothing under it.")

    @guarded
    def action_parent(self) -> None:
        if self.selected < 0:
            self._say("Select a slice first (left/right, or click).")
            return
        lane = self.trace.lane_of(self.selected).index
        level = self.lanes.level_of(self.selected)
        found = (
            nav.holder(self.trace, self.lanes.get(lane, level - 1), self.selected)
            if level > 0
            else -1
        )
        if found < 0:  # nothing drawn above it: its parent may be folded away (select opens it)
            found = int(self.trace.slices.parent[self.selected])
        if found >= 0:
            self.select(found)
        else:
            self._say("This slice is at the top of its lane.")

    @guarded
    def action_follow(self, forward: bool) -> None:
        if self.selected < 0:
            self._say("Select a launch, a kernel or an op first.")
            return
        if forward:
            linked = nav.launched_work(self.trace, self.selected) or (
                nav.caused_work(self.trace, self.selected)
                if self.trace.lane_of(self.selected).kind == "cpu"
                else []
            )
            linked = linked or nav.flows_forward(self.trace, self.selected)
        else:
            launch = nav.launch_of_work(self.trace, self.selected)
            linked = [launch] if launch >= 0 else nav.flows_back(self.trace, self.selected)
        if linked:
            self.select(linked[0])
        else:
            self._say(
                "No flow from this slice, and nothing under it launched GPU work."
                if forward
                else "No flow leads to this slice."
            )

    @guarded
    def action_match(self, delta: int) -> None:
        found = nav.next_match(self.trace, self.matches, self.selected, delta, self.window[0])
        if found < 0:
            self._say("No search yet: press / to search slice names.")
            return
        self._show_match(found)
        k, n = self.match_position()
        self._say(f"match {k:,} of {n:,}: {self.trace.slice_name(found)}")

    @guarded
    def action_next_gap(self) -> None:
        if not len(self.gap_order):
            self._say("No idle gaps: this trace has no GPU work, or it never idles.")
            return
        self._gap_step = (self._gap_step + 1) % len(self.gap_order)
        self.select_gap(int(self.gap_order[self._gap_step]))

    @guarded
    def action_peak_memory(self) -> None:
        """Select the op running when allocated memory peaked (GPU first), and show it."""
        found = peaks(self.trace)
        if not found:
            self._say("This trace has no memory records (profile with profile_memory=True).")
            return
        peak = max(found, key=lambda p: (p.device != "cpu", p.allocated))
        if peak.op >= 0:
            self.select(peak.op)
            self.set_window(
                nav.fit(
                    int(self.trace.slices.start[peak.op]),
                    int(self.trace.slices.dur[peak.op]),
                    self.trace.span_ns,
                )
            )
        else:
            width = self.window[1] - self.window[0]
            self.set_window(
                nav.clamp_window(peak.ts - width / 2, peak.ts + width / 2, self.trace.span_ns)
            )
        self._say(f"Peak {peak.device}: {format_bytes(peak.allocated)} allocated")

    def _cursor_row(self) -> Row:
        """The row under the cursor (a blank header row when the trace has no rows at all)."""
        return self.rows[self.cursor] if self.rows else Row(-1, -1, 0)

    def _cursor_lane(self) -> int:
        row = self._cursor_row()
        if row.lane < 0:
            self._say(
                "Move to a lane's row first (up/down)." if self.rows else "This trace has no lanes."
            )
        return row.lane

    def _reshaped(self, lane: int) -> None:
        """After a lane's shape or pin changed: keep the selection, or where it is hidden now,
        select what is drawn over it (the collapsed stretch, the innermost frame)."""
        if self._remembered >= 0 and self.lanes.level_of(self._remembered) >= 0:
            self.selected, self._remembered = self._remembered, -1
        elif self.selected >= 0 and self.lanes.level_of(self.selected) < 0:
            self._remembered = self.selected
            self.selected = self._drawn_over(self.selected)
        self.partners = (
            nav.linked_forward(self.trace, self.selected)
            + nav.linked_back(self.trace, self.selected)
            if self.selected >= 0
            else []
        )
        self._relayout()
        self._mark_partner_rows()
        if self.selected >= 0:
            self.cursor = self._row_of[
                (self.trace.lane_of(self.selected).index, self.lanes.level_of(self.selected))
            ]
        else:
            self.cursor = self._row_of.get((lane, 0), 0)
        self._after_selection()

    def _drawn_over(self, hidden: int) -> int:
        """The deepest slice drawn at a hidden slice's start in its lane, -1 for none."""
        lane = self.trace.lane_of(hidden).index
        t = int(self.trace.slices.start[hidden])
        for level in reversed(range(self.lanes.count(lane))):
            found = slice_at(self.lanes.get(lane, level), t)
            if found >= 0:
                return found
        return -1

    @guarded
    def action_toggle_lane(self) -> None:
        lane = self._cursor_lane()
        if lane < 0:
            return
        if self.lanes.mode(lane) == COLLAPSED:
            default = self.lanes.default_mode(lane)
            self.lanes.modes[lane] = FULL if default == COLLAPSED else default
        else:
            self.lanes.modes[lane] = COLLAPSED
        self._reshaped(lane)

    @guarded
    def action_toggle_python(self) -> None:
        lane = self._cursor_lane()
        if lane < 0:
            return
        if not self.lanes.has_python(lane):
            self._say("This lane has no Python frames (record with with_stack=True).")
            return
        self.lanes.modes[lane] = FULL if self.lanes.mode(lane) == FOLDED else FOLDED
        self._reshaped(lane)
        self._say(
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
        if lane in self.pinned:
            self.pinned = tuple(p for p in self.pinned if p != lane)
            process = self.trace.processes[self.trace.lanes[lane].process].name
            self._say(f"{name} unpinned: back in its place under {process}")
        else:
            self.pinned = tuple(sorted((*self.pinned, lane)))  # in the trace's lane order
            self._say(f"{name} pinned on top")
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
            self._say("Range started here: select another slice (or move) and press r again.")
            return
        lo, hi = min(self._mark_from[0], here[0]), max(self._mark_from[1], here[1])
        self._mark_from = None
        self.set_marked((lo, hi))

    @guarded
    def action_clear_range(self) -> None:
        self._mark_from = None
        if self.marked is None:
            self._say("No range marked: r marks one (or drag with the mouse).")
        self.set_marked(None)

    def set_marked(self, marked: tuple[int, int] | None) -> None:
        self.marked = marked
        self._window_changed()
        if marked is not None:
            a, b = marked
            self._say(f"Range {format_duration(b - a)}: +{format_time(a)} to +{format_time(b)}")

    # --- mouse ----------------------------------------------------------------------------

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
        center = self.time_at(x) if x >= 0 else None
        self.set_window(nav.zoom(self.window, factor, center, self.trace.span_ns))
        event.stop()
