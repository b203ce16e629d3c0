"""Timeline: CPU and GPU lanes over time, drawn line by line, flown with the keyboard."""

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
from tui.model.present.raster import (
    Row,
    RowIndex,
    gap_cells,
    layout,
    rasterise,
    slice_at,
    sparkline,
)
from tui.model.text import printable, shown
from tui.model.timescale import format_bytes
from tui.model.trace import Trace
from tui.widgets.error_screen import guarded
from tui.widgets.row_paint import Palette, paint_cells

ZOOM_STEP = 0.5
LABEL_LIMIT = 300  # a bar never needs more of a name than a terminal is wide
PAN_STEP = 0.25
CACHED_SCREENS = 4  # strips kept: this many screens' worth, least recently drawn dropped first


class Timeline(ScrollView, can_focus=True):
    """Every lane of a trace as rows of bars, with the selection and idle gaps marked."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--gutter",
        "timeline--process",
        "timeline--cursor",
        "timeline--selected",
        "timeline--match",
        "timeline--gap",
        "timeline--gap-selected",
        "timeline--counter",
        *(f"timeline--{kind}" for kind in KINDS),
    }
    DEFAULT_CSS = """
    Timeline { background: $surface; }
    Timeline > .timeline--gutter { color: $text-muted; }
    Timeline > .timeline--process { color: $text; text-style: bold; }
    Timeline > .timeline--cursor { background: $boost; color: $text; text-style: bold; }
    Timeline > .timeline--selected { text-style: reverse bold; }
    Timeline > .timeline--match { text-style: underline bold; }
    Timeline > .timeline--gap { color: red; }
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
        Binding("0", "fit_all", "Fit trace", show=False),
        Binding("f", "fit_selection", "Fit slice"),
        Binding("up,k", "move_row(-1)", "Row up", show=False),
        Binding("down,j", "move_row(1)", "Row down", show=False),
        Binding("left,comma", "sibling(-1)", "Previous slice", show=False),
        Binding("right,full_stop", "sibling(1)", "Next slice", show=False),
        Binding("enter", "child", "First child", show=False),
        Binding("backspace", "parent", "Parent", show=False),
        Binding("right_square_bracket", "follow(True)", "Follow flow", show=False),
        Binding("left_square_bracket", "follow(False)", "Flow back", show=False),
        Binding("n", "match(1)", "Next match", show=False),
        Binding("N", "match(-1)", "Previous match", show=False),
        Binding("g", "next_gap", "Next idle gap"),
        Binding("c", "toggle_lane", "Collapse lane", show=False),
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
        """Posted when the visible time window (or the gutter) changes."""

        def __init__(self, window: tuple[int, int], gutter: int) -> None:
            super().__init__()
            self.window, self.gutter = window, gutter

    def __init__(self, trace: Trace, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.trace = trace
        self.index = RowIndex(trace)
        self.kinds = slice_kinds(trace)
        self.labels = [shown(n, LABEL_LIMIT) for n in trace.names]
        self.counters = counter_series(trace)
        self.gaps: Gaps = idle_gaps(trace)
        self.gap_order = largest_first(self.gaps)
        self._gap_step = -1
        self.collapsed: set[int] = set()
        self.rows: list[Row] = []
        self._row_of: dict[tuple[int, int], int] = {}
        self.window = (0, max(trace.span_ns, 1))
        self.selected = -1  # slice row, -1 for none
        self.selected_gap = -1
        self.cursor = 0  # display row
        self.matches = np.zeros(0, np.int64)
        self._match_mask: npt.NDArray[np.bool_] | None = None
        self._strips: OrderedDict[tuple[int, int, int, bool], Strip] = OrderedDict()
        self._palette_now: Palette | None = None
        self._work_rows: dict[tuple[int, int], bool] = {}
        self._work_kinds = [KINDS.index(k) for k in ("kernel", "memcpy", "memset", "comm")]
        self._relayout()
        self.cursor = next((i for i, r in enumerate(self.rows) if r.lane >= 0), 0)

    # --- geometry -------------------------------------------------------------------------

    @property
    def gutter_width(self) -> int:
        return min(32, max(12, self.size.width // 5))

    @property
    def cells_width(self) -> int:
        return max(self.size.width - self.gutter_width, 1)

    def time_at(self, x: int) -> int:
        """The time under column `x` of the cells area."""
        t0, t1 = self.window
        return int(t0 + (x + 0.5) * (t1 - t0) / self.cells_width)

    def _relayout(self) -> None:
        self.rows = layout(self.trace, frozenset(self.collapsed))
        self._row_of = {(r.lane, r.depth): i for i, r in enumerate(self.rows) if r.lane >= 0}
        self.virtual_size = Size(0, len(self.rows))
        self._invalidate()

    def _invalidate(self) -> None:
        self._strips.clear()
        self._palette_now = None  # styles are looked up once per repaint, not once per row
        self.refresh()

    def notify_style_update(self) -> None:
        """A theme or CSS change: strips painted with the old styles must not be reused."""
        super().notify_style_update()
        self._invalidate()

    def on_resize(self, event: events.Resize) -> None:
        self._invalidate()
        self._window_changed()

    def _window_changed(self) -> None:
        self.post_message(self.WindowChanged(self.window, self.gutter_width))

    # --- drawing --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        width = self.size.width
        if index >= len(self.rows) or width <= 0:
            return Strip.blank(width, self.rich_style)
        row = self.rows[index]
        mark = self.selected if self._row_holds(row, self.selected) else -1
        gap = self.selected_gap
        if gap >= 0 and int(self.gaps.lane[gap]) == row.lane:
            mark = -2 - gap
        key = (index, width, mark, index == self.cursor)
        strip = self._strips.get(key)
        if strip is not None:
            self._strips.move_to_end(key)
            return strip
        try:
            strip = self._paint(row, index == self.cursor)
        except Exception as error:  # drawn in the row itself: the rest still works
            text = f" cannot draw this row: {type(error).__name__}: {error}"
            strip = Strip([Segment(set_cell_size(printable(text), width), self.rich_style)])
        self._strips[key] = strip
        while len(self._strips) > CACHED_SCREENS * max(self.size.height, 1):
            self._strips.popitem(last=False)
        return strip

    def _row_holds(self, row: Row, slice_row: int) -> bool:
        if slice_row < 0 or row.lane < 0:
            return False
        lane = self.trace.lanes[row.lane]
        return (
            lane.lo <= slice_row < lane.hi and int(self.trace.slices.depth[slice_row]) == row.depth
        )

    def _paint(self, row: Row, is_cursor: bool) -> Strip:
        gutter = self.gutter_width
        base = self.rich_style
        label_style = base + self.get_component_rich_style(
            "timeline--cursor"
            if is_cursor
            else ("timeline--process" if row.lane < 0 else "timeline--gutter")
        )
        segments = [Segment(set_cell_size(self._label(row), gutter), label_style)]
        if row.counter >= 0:
            series = self.counters[row.counter]
            spark, _ = sparkline(series.ts, series.values, *self.window, self.cells_width)
            style = base + self.get_component_rich_style("timeline--counter")
            segments.append(Segment(spark, style))
            return Strip(segments, self.size.width)
        if row.lane < 0:
            segments.append(Segment(" " * self.cells_width, base))
            return Strip(segments, self.size.width)
        t0, t1 = self.window
        cells = rasterise(self.index.get(row.lane, row.depth), t0, t1, self.cells_width)
        gaps = (
            gap_cells(self.gaps, row.lane, t0, t1, self.cells_width, self.selected_gap)
            if self._holds_work(row)
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
        )
        return Strip(segments, self.size.width)

    def _label(self, row: Row) -> str:
        if row.counter >= 0:
            return f"   {printable(self.counters[row.counter].name)}"
        if row.lane < 0:
            return printable(self.trace.processes[row.process].name)
        if row.depth > 0:
            return ""
        lane = self.trace.lanes[row.lane]
        mark = "▸" if row.lane in self.collapsed else ("▾" if lane.rows > 1 else " ")
        return f" {mark} {printable(lane.name)}"

    def _palette(self) -> Palette:
        style = self.get_component_rich_style
        self._palette_now = Palette(
            base=self.rich_style,
            kinds=[style(f"timeline--{kind}") for kind in KINDS],
            selected=style("timeline--selected"),
            match=style("timeline--match"),
            gap=style("timeline--gap"),
            gap_selected=style("timeline--gap-selected"),
        )
        return self._palette_now

    def _holds_work(self, row: Row) -> bool:
        """Whether the row has GPU work: gaps are drawn there (under a GPU annotation such as
        ProfilerStep#N, kernels sit one row down)."""
        key = (row.lane, row.depth)
        found = self._work_rows.get(key)
        if found is None:
            kinds = self.kinds[self.index.get(row.lane, row.depth).rows]
            found = self._work_rows[key] = bool(np.isin(kinds, self._work_kinds).any())
        return found

    # --- state changes --------------------------------------------------------------------

    def set_window(self, window: tuple[int, int]) -> None:
        if window != self.window:
            self.window = window
            self._invalidate()
            self._window_changed()

    def select(self, slice_row: int, *, reveal: bool = True) -> None:
        """Select a slice (-1 for none), move the row cursor to it and bring it into view."""
        self.selected = slice_row
        self.selected_gap = -1
        if slice_row >= 0:
            lane = self.trace.lane_of(slice_row)
            depth = int(self.trace.slices.depth[slice_row])
            if lane.index in self.collapsed and depth > 0:
                self.collapsed.discard(lane.index)
                self._relayout()
            self.cursor = self._row_of[(lane.index, depth)]
            if reveal:
                self._reveal(
                    int(self.trace.slices.start[slice_row]), int(self.trace.slices.dur[slice_row])
                )
        self._after_selection()

    def select_gap(self, gap: int) -> None:
        self.selected, self.selected_gap = -1, gap
        lane = int(self.gaps.lane[gap])
        depth = int(self.trace.slices.depth[int(self.gaps.next_work[gap])])  # the work's row
        if lane in self.collapsed and depth > 0:
            self.collapsed.discard(lane)
            self._relayout()
        self.cursor = self._row_of[(lane, depth)]
        start, end = int(self.gaps.start[gap]), int(self.gaps.end[gap])
        self.set_window(nav.fit(start, end - start, self.trace.span_ns))
        self._after_selection()

    def _after_selection(self) -> None:
        # Only the rows holding the old and new selection (or cursor) change: the strip cache
        # is keyed on those, so everything else is a cache hit.
        self.refresh()
        self.scroll_to_region_row(self.cursor)
        row = self.rows[self.cursor] if self.rows else None
        counter = row.counter if row is not None else -1
        self.post_message(
            self.SelectionChanged(self.selected, self.selected_gap, counter, self.window)
        )

    def scroll_to_region_row(self, row: int) -> None:
        top = int(self.scroll_offset.y)
        height = max(self.size.height, 1)
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False)

    def _reveal(self, start: int, dur: int) -> None:
        """Pan (keeping the zoom) so that the slice's start is on screen."""
        t0, t1 = self.window
        if start + dur < t0 or start > t1:
            width = t1 - t0
            self.set_window(
                nav.clamp_window(start - width / 2, start + width / 2, self.trace.span_ns)
            )

    def set_search(self, text: str) -> int:
        """Highlight slices whose name contains `text`; select the first match from the view's
        start. Returns the number of matches."""
        self.set_matches(nav.search(self.trace, text))
        first = nav.first_match_from(self.trace, self.matches, self.window[0])
        if first >= 0:
            self.select(first)
        return len(self.matches)

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

    # --- actions --------------------------------------------------------------------------

    @guarded
    def action_zoom(self, factor: float) -> None:
        center = None
        if self.selected >= 0:
            s = self.trace.slices
            mid = int(s.start[self.selected]) + int(s.dur[self.selected]) // 2
            if self.window[0] <= mid <= self.window[1]:
                center = mid
        self.set_window(nav.zoom(self.window, factor, center, self.trace.span_ns))

    @guarded
    def action_pan(self, fraction: float) -> None:
        self.set_window(nav.pan(self.window, fraction, self.trace.span_ns))

    @guarded
    def action_fit_all(self) -> None:
        self.set_window((0, max(self.trace.span_ns, 1)))

    @guarded
    def action_fit_selection(self) -> None:
        if self.selected >= 0:
            s = self.trace.slices
            self.set_window(
                nav.fit(int(s.start[self.selected]), int(s.dur[self.selected]), self.trace.span_ns)
            )
        elif self.selected_gap >= 0:
            self.select_gap(self.selected_gap)

    @guarded
    def action_move_row(self, delta: int) -> None:
        target = nav.row_move(self.rows, self.cursor, delta)
        if target is None:
            return
        row = self.rows[target]
        if row.counter >= 0:  # the details show the counter's value at the view's centre
            self.cursor = target
            self.selected, self.selected_gap = -1, -1
            self._after_selection()
            return
        t0, t1 = self.window
        t = nav.focus_time(self.trace, self.selected, self.window)
        found = slice_at(self.index.get(row.lane, row.depth), t, tolerance=t1 - t0)
        if found >= 0:
            self.select(found)
        else:
            self.cursor = target
            self.selected, self.selected_gap = -1, -1
            self._after_selection()

    @guarded
    def action_sibling(self, delta: int) -> None:
        row = self.rows[self.cursor]
        if row.lane < 0:
            return
        found = nav.sibling(self.index.get(row.lane, row.depth), self.selected, delta, self.window)
        if found >= 0:
            self.select(found)

    @guarded
    def action_child(self) -> None:
        if self.selected >= 0:
            kids = nav.children(self.trace, self.selected)
            if len(kids):
                self.select(int(kids[0]))

    @guarded
    def action_parent(self) -> None:
        if self.selected >= 0 and self.trace.slices.parent[self.selected] >= 0:
            self.select(int(self.trace.slices.parent[self.selected]))

    @guarded
    def action_follow(self, forward: bool) -> None:
        if self.selected < 0:
            return
        linked = (nav.linked_forward if forward else nav.linked_back)(self.trace, self.selected)
        if linked:
            self.select(linked[0])

    @guarded
    def action_match(self, delta: int) -> None:
        found = nav.next_match(self.trace, self.matches, self.selected, delta, self.window[0])
        if found >= 0:
            self.select(found)

    @guarded
    def action_next_gap(self) -> None:
        if len(self.gap_order):
            self._gap_step = (self._gap_step + 1) % len(self.gap_order)
            self.select_gap(int(self.gap_order[self._gap_step]))

    @guarded
    def action_peak_memory(self) -> None:
        """Select the op running when allocated memory peaked (GPU first), and show it."""
        found = peaks(self.trace)
        if not found:
            self.notify("This trace has no memory records (profile with profile_memory=True).")
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
        self.notify(f"Peak {peak.device}: {format_bytes(peak.allocated)} allocated")

    @guarded
    def action_toggle_lane(self) -> None:
        row = self.rows[self.cursor]
        if row.lane < 0:
            return
        if row.lane in self.collapsed:
            self.collapsed.discard(row.lane)
        elif self.trace.lanes[row.lane].rows > 1:
            self.collapsed.add(row.lane)
            s = self.trace.slices
            if (
                self.selected >= 0
                and s.depth[self.selected] > 0
                and (self.trace.lane_of(self.selected).index == row.lane)
            ):
                self.selected = -1
        else:
            return
        self._relayout()
        self.cursor = self._row_of[(row.lane, 0)]
        self._after_selection()

    # --- mouse ----------------------------------------------------------------------------

    @guarded
    def on_click(self, event: events.Click) -> None:
        index = int(self.scroll_offset.y) + event.y
        if not 0 <= index < len(self.rows) or self.rows[index].lane < 0:
            return
        row = self.rows[index]
        if event.x < self.gutter_width:
            self.cursor = index
            self._after_selection()
            return
        t0, t1 = self.window
        cell_ns = max((t1 - t0) // self.cells_width, 1)
        found = slice_at(
            self.index.get(row.lane, row.depth),
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
