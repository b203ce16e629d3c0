"""LaneCanvas: the timeline's drawing: lanes as rows of bars, the pinned rows held on top,
the selection, flows, matches and idle gaps marked; strips cached per row.

The keys and the selection logic are the Timeline's (timeline.py), built on this.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from rich.cells import set_cell_size
from rich.segment import Segment
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.model.analysis.gaps import Gaps, idle_gaps, largest_first
from tui.model.analysis.memory import counter_series
from tui.model.present import navigate as nav
from tui.model.present.details import counter_value
from tui.model.present.kinds import KINDS, slice_kinds
from tui.model.present.raster import gap_cells, keep_visible, rasterise, sparkline
from tui.model.present.rows import COLLAPSED, FULL, LaneRows, Row, layout
from tui.model.text import printable, shown
from tui.model.trace import Trace
from tui.widgets.row_paint import Palette, clip, paint_cells

LABEL_LIMIT = 300  # a bar never needs more of a name than a terminal is wide
CACHED_SCREENS = 4  # strips kept: this many screens' worth, least recently drawn dropped first
PINNED_SHARE = 0.5  # pinned lanes take at most this share of the rows by default
WORK_KINDS = ("kernel", "memcpy", "memset", "comm")


class LaneCanvas(ScrollView, can_focus=True):
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
    LaneCanvas { background: $surface; scrollbar-size-vertical: 1; }
    LaneCanvas > .timeline--gutter { color: $text-muted; }
    LaneCanvas > .timeline--pinned { color: $text; background: $boost; }
    LaneCanvas > .timeline--process { color: $text; text-style: bold; }
    LaneCanvas > .timeline--cursor { background: $accent; color: $text; text-style: bold; }
    LaneCanvas > .timeline--selected { text-style: reverse bold; }
    LaneCanvas > .timeline--partner { color: yellow; text-style: bold underline; }
    LaneCanvas > .timeline--match { text-style: underline bold; }
    LaneCanvas > .timeline--gap { color: $text-muted; }
    LaneCanvas > .timeline--gap-device { color: red; }
    LaneCanvas > .timeline--gap-selected { color: yellow; background: red; text-style: bold; }
    LaneCanvas > .timeline--counter { color: darkcyan; }
    LaneCanvas > .timeline--other { background: dimgray; color: white; }
    LaneCanvas > .timeline--cpu_op { background: royalblue; color: white; }
    LaneCanvas > .timeline--annotation { background: mediumpurple; color: white; }
    LaneCanvas > .timeline--python { background: darkgray; color: black; }
    LaneCanvas > .timeline--runtime { background: darkorange; color: black; }
    LaneCanvas > .timeline--kernel { background: seagreen; color: white; }
    LaneCanvas > .timeline--memcpy { background: goldenrod; color: black; }
    LaneCanvas > .timeline--memset { background: darkkhaki; color: black; }
    LaneCanvas > .timeline--comm { background: mediumvioletred; color: white; }
    LaneCanvas > .timeline--gpu_annotation { background: rebeccapurple; color: white; }
    LaneCanvas > .timeline--sync { background: indianred; color: black; }
    """

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
        self._before_collapse: dict[int, str] = {}  # lane: its shape before `c`
        self._saying: str | None = None  # what the key being handled will say
        self.searched = ""  # the last search's text
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
            spark, values = sparkline(series.ts, series.values, *self.window, self.cells_width)
            style = base + self.get_component_rich_style("timeline--counter")
            # The scale: the highest value in view, at the row's end (the bars are relative).
            top = float(values.max()) if len(values) else 0.0
            scale = f" max {counter_value(series.name, top)}"
            if len(scale) + 8 < len(spark):
                spark = spark[: len(spark) - len(scale)]
                segments.append(Segment(spark, style))
                segments.append(
                    Segment(scale, base + self.get_component_rich_style("timeline--gutter"))
                )
            else:
                segments.append(Segment(spark, style))
            return Strip(segments, width)
        if row.lane < 0 and not row.group:
            segments.append(Segment(" " * self.cells_width, base))
            return Strip(segments, width)
        t0, t1 = self.window
        gaps = None
        if row.group:
            cells = rasterise(self.lanes.group(row.group), t0, t1, self.cells_width)
        else:
            cells = rasterise(self.lanes.get(row.lane, row.level), t0, t1, self.cells_width)
            if self._row_holds(row, self.selected):
                s = self.trace.slices
                start, end = int(s.start[self.selected]), int(s.end[self.selected])
                cells = keep_visible(cells, self.selected, start, end, t0, t1)
            if row.level == self._gap_row(row.lane):
                gaps = gap_cells(self.gaps, row.lane, t0, t1, self.cells_width, self.selected_gap)
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
            name = f"{name} ({printable(self.trace.processes[lane.process].name)})"
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
        if found is None and self.trace.lanes[lane].kind != "gpu":
            found = self._gap_level[lane] = -1  # CPU ops named like NCCL are no stream
        if found is None:
            counts = [
                int(np.isin(self.kinds[self.lanes.get(lane, level).rows], self._work_kinds).sum())
                for level in range(self.lanes.count(lane))
            ]
            best = int(np.argmax(counts)) if counts else 0
            found = self._gap_level[lane] = best if counts and counts[best] else -1
        return found

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
