"""LaneCanvas: the timeline's drawing: a scene's rows as bars over a time window, the pinned
rows held on top, the selection, flows, matches and idle gaps marked; strips cached per row.

It only draws: what to show comes from the Timeline (timeline.py), which holds it and hands
it a Scene (the rows) and a View (the window and the marks) after every key.
"""

from __future__ import annotations

from collections import OrderedDict
from functools import cached_property
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.actions import SkipAction
from textual.color import Color
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.model.present.details import counter_value, is_memory
from tui.model.present.kinds import KINDS
from tui.model.present.raster import (
    MEMORY_SCALE_FLOOR,
    gap_cells,
    keep_visible,
    rasterise,
    sparkline,
)
from tui.model.present.rows import COLLAPSED, FULL, DisplayRow
from tui.model.text import printable
from tui.widgets.row_paint import Palette, clip, paint_cells
from tui.widgets.timeline_scene import Scene
from tui.widgets.timeline_view import View

CACHED_SCREENS = 4  # strips kept: this many screens' worth, least recently drawn dropped first

# The styles no theme changes, over the canvas's own: the bars by kind and the marks. Not
# component classes: Textual styles each of a widget's component classes again at every focus
# change and screen switch (about 80 us each), and the canvas had 22, the most of any widget.
# Colours by their CSS names, as Textual reads them there: (background, colour, text style).
FIXED: dict[str, tuple[str | None, str | None, str]] = {
    "selected": (None, None, "reverse bold"),
    "partner": (None, "yellow", "bold underline"),
    "match": (None, None, "underline bold"),
    "gap-device": (None, "red", ""),
    "gap-selected": ("red", "yellow", "bold"),
    "counter": (None, "darkcyan", ""),
    "other": ("dimgray", "white", ""),
    "cpu_op": ("royalblue", "white", ""),
    "annotation": ("mediumpurple", "white", ""),
    "python": ("darkgray", "black", ""),
    "runtime": ("darkorange", "black", ""),
    "kernel": ("seagreen", "white", ""),
    "memcpy": ("goldenrod", "black", ""),
    "memset": ("darkkhaki", "black", ""),
    "comm": ("mediumvioletred", "white", ""),
    "gpu_annotation": ("rebeccapurple", "white", ""),
    "sync": ("indianred", "black", ""),
}


def _fixed(name: str) -> Style:
    background, color, text = FIXED[name]
    return Style(
        bgcolor=Color.parse(background).rich_color if background else None,
        color=Color.parse(color).rich_color if color else None,
    ) + Style.parse(text or "none")


_FIXED_STYLES = {name: _fixed(name) for name in FIXED}

# A strip's key: everything that differs between two paints of one display row, the
# generation first (bumped when the window, the matches, the rows or the styles change).
StripKey = tuple[int, int, int, int, bool, bool, int]


class LaneCanvas(ScrollView, can_focus=False):
    """Every row of a scene as bars over the view's window (the Timeline takes the keys)."""

    # The styles a theme changes; the others are FIXED (above).
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--gutter",
        "timeline--pinned",
        "timeline--process",
        "timeline--cursor",
        "timeline--gap",
    }
    DEFAULT_CSS = """
    LaneCanvas { background: $surface; scrollbar-size-vertical: 1; }
    LaneCanvas > .timeline--gutter { color: $text-muted; }
    LaneCanvas > .timeline--pinned { color: $text; background: $boost; }
    LaneCanvas > .timeline--process { color: $text; text-style: bold; }
    LaneCanvas > .timeline--cursor { background: $accent; color: $text; text-style: bold; }
    LaneCanvas > .timeline--gap { color: $text-muted; }
    """

    class AreaChanged(Message):
        """Posted when the area drawn in changed size: a resize (`resized`), or the vertical
        scrollbar came or went, which narrows or widens the cells."""

        def __init__(self, resized: bool) -> None:
            super().__init__()
            self.resized = resized

    def __init__(self, scene: Scene, view: View | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.scene = scene
        self.view = view or View((0, max(scene.trace.span_ns, 1)))
        self._strips: OrderedDict[StripKey, Strip] = OrderedDict()
        self._generation = 0
        self._scene_drawn = -1  # the scene generation the virtual size was set for
        self._palette_now: Palette | None = None
        self._looks: dict[str, Style] = {}  # "": the canvas's own; else it + a class or FIXED
        self._sync_scene()

    def show(self, view: View) -> None:
        """Draw this view of the scene (after the scene changed, too: its rows are re-read)."""
        old, self.view = self.view, view
        if self._sync_scene() or view.repaints_all(old):
            self._invalidate()
        else:  # only the rows keyed on the old and new marks are painted again
            self.refresh()

    def _sync_scene(self) -> bool:
        if self._scene_drawn == self.scene.generation:
            return False
        self._scene_drawn = self.scene.generation
        self.virtual_size = Size(0, len(self.scene.rows))
        return True

    @property
    def cached(self) -> int:
        """How many strips are kept now."""
        return len(self._strips)

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
        """A fifth of the width (12 to 32 columns), grown to the longest lane label up to a
        third of the width (a longer name is cut there; the details give it in full)."""
        fifth = min(32, max(12, self.draw_width // 5))
        return max(fifth, min(self._label_width, self.draw_width // 3))

    @cached_property
    def _label_width(self) -> int:
        """The longest lane label: " ▾ name " (a process's own row may be cut)."""
        names = [lane.name for lane in self.scene.trace.lanes]
        return max((cell_len(printable(n)) for n in names), default=0) + 4

    @property
    def cells_width(self) -> int:
        return max(self.draw_width - self.gutter_width, 1)

    def time_at(self, x: int) -> int:
        """The time under column `x` of the cells area."""
        t0, t1 = self.view.window
        return int(t0 + (x + 0.5) * (t1 - t0) / self.cells_width)

    @property
    def fixed_rows(self) -> int:
        """Pinned rows held at the top: all of them, but never the whole view (the rest of
        the pinned rows then scroll with the others)."""
        return min(self.scene.pinned_rows, max(self.view_height - 1, 0))

    def row_at(self, y: int) -> int:
        """The display row drawn on line `y` (pinned rows stay at the top), or -1."""
        index = y if y < self.fixed_rows else y + int(self.scroll_offset.y)
        return index if 0 <= index < len(self.scene.rows) else -1

    def _invalidate(self) -> None:
        self._generation += 1
        self._strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        """A theme or CSS change: strips painted with the old styles must not be reused."""
        super().notify_style_update()
        # Styles are looked up once per restyle, not once per row or per repaint: each lookup
        # walks the widget's ancestors, and the canvas sits under its Timeline. A restyle that
        # leaves the canvas's own rules as they were (a focus change) does not reach it, so no
        # look may depend on focus or on an ancestor's classes.
        self._palette_now = None
        self._looks.clear()
        self._invalidate()

    def on_resize(self, event: events.Resize) -> None:
        self._invalidate()
        self.post_message(self.AreaChanged(resized=True))

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        self._invalidate()
        self.post_message(self.AreaChanged(resized=False))

    # --- drawing --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.draw_width
        index = self.row_at(y)
        if index < 0 or width <= 0:
            return Strip.blank(width, self._look(""))
        scene, view = self.scene, self.view
        row = scene.rows[index]
        mark = view.selected if scene.holds(row, view.selected) else -1
        gap = view.selected_gap
        if gap >= 0 and row.lane >= 0 and scene.is_gpu(row.lane):
            mark = -2 - gap  # a device gap is drawn on every stream
        sticky = y == self.fixed_rows and y > 0 and row.level > 0
        partner = view.selected if (row.lane, row.level) in view.partner_rows else -1
        cursor = index == view.cursor
        key = (self._generation, index, width, mark, cursor, sticky, partner)
        strip = self._strips.get(key)
        if strip is not None:
            self._strips.move_to_end(key)
            return strip
        try:
            strip = self._paint(row, cursor, sticky)
        except Exception as error:  # drawn in the row itself: the rest still works
            text = f" cannot draw this row: {type(error).__name__}: {error}"
            strip = Strip([Segment(set_cell_size(printable(text), width), self._look(""))])
        self._strips[key] = strip
        while len(self._strips) > CACHED_SCREENS * self.view_height:
            self._strips.popitem(last=False)
        return strip

    def _paint(self, row: DisplayRow, is_cursor: bool, sticky: bool) -> Strip:
        scene, view = self.scene, self.view
        gutter = self.gutter_width
        base = self._look("")
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
        segments = [Segment(label, self._look(name))]
        width = self.draw_width
        if row.counter >= 0:
            series = scene.counters[row.counter]
            floor = MEMORY_SCALE_FLOOR if is_memory(series.name) else 0.0
            spark, values = sparkline(
                series.ts, series.values, *view.window, self.cells_width, floor
            )
            style = self._look("timeline--counter")
            # The scale: the highest value in view, at the row's end (the bars are relative).
            top = float(values.max()) if len(values) else 0.0
            scale = f" max {counter_value(series.name, top)}"
            if len(scale) + 8 < len(spark):
                spark = spark[: len(spark) - len(scale)]
                segments.append(Segment(spark, style))
                segments.append(Segment(scale, self._look("timeline--gutter")))
            else:
                segments.append(Segment(spark, style))
            return Strip(segments, width)
        if row.lane < 0 and not row.group:
            segments.append(Segment(" " * self.cells_width, base))
            return Strip(segments, width)
        t0, t1 = view.window
        gaps = None
        if row.group:
            cells = rasterise(scene.lanes.group(row.group), t0, t1, self.cells_width)
        else:
            cells = rasterise(scene.lanes.get(row.lane, row.level), t0, t1, self.cells_width)
            if scene.holds(row, view.selected):
                s = scene.trace.slices
                start, end = int(s.start[view.selected]), int(s.end[view.selected])
                cells = keep_visible(cells, view.selected, start, end, t0, t1)
            if row.level == scene.gap_row(row.lane):
                gaps = gap_cells(scene.gaps, row.lane, t0, t1, self.cells_width, view.selected_gap)
        segments += paint_cells(
            cells,
            scene.kinds,
            scene.trace.slices.name,
            scene.labels,
            self._palette_now or self._palette(),
            view.selected,
            view.match_mask,
            gaps,
            view.selected_gap,
            view.partners,
            scene.gaps.device_from,
        )
        return Strip(segments, width)

    def _label(self, row: DisplayRow, sticky: bool) -> str:
        trace = self.scene.trace
        if row.counter >= 0:
            return f"   {printable(self.scene.counters[row.counter].name)}"
        if row.group:
            return f" + {len(row.group)} streams"
        if row.lane < 0:
            return printable(trace.processes[row.process].name)
        lane = trace.lanes[row.lane]
        name = printable(lane.name)
        if row.pinned and len({trace.lanes[p].process for p in self.scene.pinned}) > 1:
            name = f"{name} ({printable(trace.processes[lane.process].name)})"
        if row.level > 0:
            return f" ↳ {name}" if sticky else ""
        lanes = self.scene.lanes
        many = lanes.shape(row.lane, FULL).rows > 1
        mark = "▸" if lanes.mode(row.lane) == COLLAPSED else ("▾" if many else " ")
        return f" {mark} {name}"

    def _look(self, name: str) -> Style:
        """The canvas's style (`name` ""), or it with a component class's or a FIXED style's
        over it (`timeline--NAME`)."""
        look = self._looks.get(name)
        if look is None:
            base = self.rich_style
            fixed = _FIXED_STYLES.get(name.removeprefix("timeline--"))
            if not name:
                look = base
            elif fixed is not None:
                look = base + fixed
            else:
                look = base + self.get_component_rich_style(name)
            self._looks[name] = look
        return look

    def _palette(self) -> Palette:
        look = self._look
        self._palette_now = Palette(
            base=look(""),
            kinds=[look(f"timeline--{kind}") for kind in KINDS],
            selected=look("timeline--selected"),
            partner=look("timeline--partner"),
            match=look("timeline--match"),
            gap=look("timeline--gap"),
            gap_device=look("timeline--gap-device"),
            gap_selected=look("timeline--gap-selected"),
        )
        return self._palette_now

    # --- scrolling ------------------------------------------------------------------------

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

    # Home and end jump, as the page keys do: Textual's own animate the scroll (half a second
    # of frames, each sent over the SSH link).
    def action_scroll_home(self) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction
        self.scroll_to(y=0, animate=False)

    def action_scroll_end(self) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction
        self.scroll_to(y=self.max_scroll_y, animate=False)

    def action_page_down(self) -> None:
        self.scroll_to(y=self.scroll_offset.y + self.view_height - self.fixed_rows, animate=False)

    def action_page_up(self) -> None:
        self.scroll_to(y=self.scroll_offset.y - self.view_height + self.fixed_rows, animate=False)
