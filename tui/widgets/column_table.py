"""ColumnTable: a row-cursor DataTable whose left and right keys scroll by whole columns, and
whose one-line cells are drawn without Rich's layout pipeline.

Textual's DataTable scrolls a row-cursor table one cell at a time, so reaching the roofline
columns of the op table took about 60 presses; here each press brings the next (or the
previous) column to the left edge, just right of the fixed ones.

It also draws each cell through Rich's padding, styling and wrapping renderables: a third of a
pane's first paint, paid again on each sort, filter and scope. Every cell here is one line of
text that fits its column, so `_render_cell` lays it out directly (the same segments; a test
compares the two on every table) and leaves anything else to Textual.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.strip import Strip
from textual.widgets import DataTable

_SegmentLines = list[list[Segment]]


class ColumnTable(DataTable[Text]):
    HELP_TITLE = "Table"  # its section of the help
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor_left", "Scroll left a column", show=False),
        Binding("right", "cursor_right", "Scroll right a column", show=False),
        # As in the stats pane's first tables: rows, in every table (Textual's End scrolled a
        # row table to its last columns, the stats table went to its last row).
        Binding("home", "first_row", "First row", show=False),
        Binding("end", "last_row", "Last row", show=False),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only the keys that can move from here (the help lists no key that does nothing)."""
        if self.cursor_type == "row":
            if action == "cursor_left":
                return self.scroll_x > 0
            if action == "cursor_right":
                return self.scroll_x < self.max_scroll_x
        if action == "first_row":
            return self.cursor_row > 0 or self.scroll_y > 0
        if action == "last_row":
            return self.cursor_row < self.row_count - 1
        return super().check_action(action, parameters)

    def action_first_row(self) -> None:
        self.move_cursor(row=0, animate=False)
        self.scroll_to(y=0, animate=False)  # the columns stay scrolled where they are

    def action_last_row(self) -> None:
        self.move_cursor(row=max(self.row_count - 1, 0), animate=False)

    def action_cursor_left(self) -> None:
        if self.cursor_type == "row":
            self._by_column(-1)
        else:
            super().action_cursor_left()

    def action_cursor_right(self) -> None:
        if self.cursor_type == "row":
            self._by_column(1)
        else:
            super().action_cursor_right()

    def _edges(self) -> list[int]:
        """The scroll offset that puts each scrolling column at the left edge, after the
        fixed ones."""
        widths = [c.get_render_width(self) for c in self.ordered_columns]
        edges, x = [], 0
        for width in widths[self.fixed_columns :]:
            edges.append(x)
            x += width
        return edges

    def render_line(self, y: int) -> Strip:
        """The line, less any column cut by the right edge: a cut number reads as another
        (`3.08 ms` cut to `3.0`), so the space it would take stays blank."""
        strip = super().render_line(y)
        if self.cursor_type != "row" or not self.ordered_columns:
            return strip
        widths = [c.get_render_width(self) for c in self.ordered_columns]
        fixed = sum(widths[: self.fixed_columns])
        x, right = fixed - round(self.scroll_x), fixed
        for width in widths[self.fixed_columns :]:
            x += width
            if x > strip.cell_length:
                break
            right = max(right, x)
        if right >= strip.cell_length or x <= strip.cell_length:
            return strip  # every column shown whole (or none cut at the edge)
        kept = strip.crop(0, right)
        style = next((seg.style for seg in reversed(list(kept)) if seg.style), None)
        return kept.extend_cell_length(strip.cell_length, style)

    @property
    def max_scroll_x(self) -> int:
        """Far enough right that a column's start is at the left edge, with blank space after
        the last: the last columns in view show no cut column before them (`End`, `right`)."""
        most = super().max_scroll_x
        if most == 0 or self.cursor_type != "row":
            return most
        return next((e for e in self._edges() if e >= most), most)

    def _by_column(self, step: int) -> None:
        edges = self._edges()
        now = round(self.scroll_x)
        if step > 0:
            target = next((e for e in edges if e > now), now)
        else:
            target = next((e for e in reversed(edges) if e < now), 0)
        self.scroll_to(x=min(target, self.max_scroll_x), animate=False)

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> _SegmentLines:
        fast = self._one_line_cell(row_index, column_index, base_style, width, cursor, hover)
        if fast is not None:
            return fast
        return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)

    def _one_line_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool,
        hover: bool,
    ) -> _SegmentLines | None:
        """The cell as DataTable draws it (its cache and styles), or None where it is not a
        one-line Text that fits: a row label, a taller row, a tab, a cut."""
        header = row_index == -1
        if column_index < 0 or (self._labelled_row_exists and self.show_row_labels):
            return None
        row_key = self._header_row_key if header else self._row_locations.get_key(row_index)
        if row_key is None or (self.header_height if header else self.rows[row_key].height) != 1:
            return None
        column_key = self._column_locations.get_key(column_index)
        if column_key is None:
            return None
        key = (
            row_key,
            column_key,
            base_style,
            cursor,
            hover,
            self._show_hover_cursor,
            self._update_count,
            self._pseudo_class_state,
        )
        cached = self._cell_render_cache.get(key)
        if cached is not None:
            return cached
        cell = self._get_row_renderables(row_index).cells[column_index]
        if not isinstance(cell, Text):
            return None
        plain, pad = cell.plain, self.cell_padding
        inner = width - 2 * pad
        used = cell_len(plain)
        if used > inner or "\n" in plain or "\t" in plain or cell.justify == "full":
            return None
        fixed = not header and (row_index < self.fixed_rows or column_index < self.fixed_columns)
        style, post = self._get_styles_to_render_cell(
            header,
            False,
            fixed,
            hover,
            cursor,
            self.show_cursor,
            self._show_hover_cursor,
            self.cursor_foreground_priority == "css",
            self.cursor_background_priority == "css",
        )
        pre = base_style + Style.from_meta({"row": row_index, "column": column_index}) + style
        line = _laid_out(cell, inner)
        segments = [
            Segment(" " * pad),
            *Text("\n").join([line]).render(self.app.console),
            Segment(" " * (width - pad - cell_len(line.plain))),
        ]
        lines = [list(Segment.apply_style(segments, pre, post))]
        self._cell_render_cache[key] = lines
        return lines


def _laid_out(cell: Text, width: int) -> Text:
    """The cell's one line justified in `width` cells as Rich's `Lines.justify` does it."""
    justify = cell.justify or "default"
    if justify == "default":
        return cell
    line = cell.copy()
    if justify == "left":
        line.truncate(width, pad=True)
        return line
    line.rstrip()
    used = cell_len(line.plain)
    if justify == "right":
        line.pad_left(width - used)
    else:  # center
        line.pad_left((width - used) // 2)
        line.pad_right(width - cell_len(line.plain))
    return line
