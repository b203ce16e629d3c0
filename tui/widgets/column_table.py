"""ColumnTable: a row-cursor DataTable whose left and right keys scroll by whole columns.

Textual's DataTable scrolls a row-cursor table one cell at a time, so reaching the roofline
columns of the op table took about 60 presses; here each press brings the next (or the
previous) column to the left edge, just right of the fixed ones.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable


class ColumnTable(DataTable[Text]):
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

    def _by_column(self, step: int) -> None:
        widths = [c.get_render_width(self) for c in self.ordered_columns]
        fixed = sum(widths[: self.fixed_columns])
        # The scroll offset that puts each scrolling column at the left edge, after the fixed.
        edges, x = [], fixed
        for width in widths[self.fixed_columns :]:
            edges.append(x - fixed)
            x += width
        now = round(self.scroll_x)
        if step > 0:
            target = next((e for e in edges if e > now), now)
        else:
            target = next((e for e in reversed(edges) if e < now), 0)
        self.scroll_to(x=min(target, self.max_scroll_x), animate=False)
