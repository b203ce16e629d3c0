"""StatsTable: a table of the spec (present/tables.py), showing text but sorting on raw values."""

from __future__ import annotations

from collections import OrderedDict
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from tui.model.present.tables import Column, Row, ScopeReport, Totals
from tui.model.text import printable

CELLS_KEPT = 8  # reports whose cells are kept
# Each report's cells, made once for every table: `x`, `v` and `t` come back to the same reports
# (the trace keeps them), and making the cells is half the cost of filling the table.
_CELLS: OrderedDict[tuple[int, int, bool], tuple[ScopeReport, dict[str, list[Text]], list[int]]] = (
    OrderedDict()
)
NAME_CELLS = 48  # kernel names run to hundreds of characters: the table shows their start
SHAPES_CELLS = 40  # so are the input shapes of an op with many inputs
# At 80 columns these come first (the rest scroll into view to their right).
NARROW_FIRST = (
    "Name",
    "Input Shapes",
    "Self CPU",
    "CPU total",
    "Self CUDA",
    "CUDA total",
    "# of Calls",
)
NARROW_BELOW = 120  # columns


class StatsTable(DataTable[Text]):
    """Rows sorted on raw values by the spec's sort keys (the same keys as `summary --sort`);
    a sort, a filter and a new scope go to the top (the rows there are new)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(str(n), f"sort_by({n - 1})", f"Sort by column {n}", show=False)
            for n in range(1, 10)
        ),
        Binding("home", "first_row", "First row", show=False),
        Binding("end", "last_row", "Last row", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        # The Name column stays in view while the others scroll right.
        super().__init__(cursor_type="row", zebra_stripes=True, fixed_columns=1, id=id)
        self.report: ScopeReport | None = None
        self.name_width = NAME_CELLS
        self.narrow = False
        self.table_name = ""
        self.sort_key = ""
        self.sort_column = -1  # the column pressed, which shows the mark (-1: the default's)
        self.descending = True
        self.filter_text = ""
        self._shown: list[Row] = []

    @property
    def columns_spec(self) -> list[Column]:
        columns = self.report.columns if self.report is not None else []
        if not self.narrow:
            return columns
        first = [c for h in NARROW_FIRST for c in columns if c.header == h]
        return first + [c for c in columns if c not in first]

    def fit_width(self, width: int) -> None:
        """Columns and the Name cut for a pane `width` columns wide."""
        narrow = width < NARROW_BELOW
        # At 80 columns: the five numbers and their padding take 56 cells with the scrollbar.
        name_width = NAME_CELLS if not narrow else max(16, width - 64)
        if (narrow, name_width) != (self.narrow, self.name_width):
            self.narrow, self.name_width = narrow, name_width
            self._fill()

    def show(self, report: ScopeReport, keep_place: bool = False) -> None:
        """New rows (a new scope or table kind: to the top, unless `keep_place`); a new kind
        starts from its default sort."""
        new_kind = report.table.name != self.table_name
        if new_kind:
            self.table_name = report.table.name
            self.sort_key, self.sort_column = report.sort, -1
            self.descending = report.table.column(report.sort).numeric
        self.report = report
        self._fill(from_left=new_kind)  # another kind's columns: from its first one
        if not keep_place:
            self.action_first_row()

    def set_filter(self, text: str) -> None:
        self.filter_text = text.casefold()
        self._fill()
        self.action_first_row()

    def action_sort_by(self, column: int) -> None:
        columns = self.columns_spec
        if column >= len(columns):
            return
        key = columns[column].key
        pressed_again = column == self.sort_column or (
            self.sort_column < 0 and key == self.sort_key and columns[column].share_of is None
        )
        if pressed_again:
            self.descending = not self.descending
        else:
            self.descending = columns[column].numeric  # times and counts: largest first
        self.sort_key, self.sort_column = key, column
        self._fill(reveal=column)
        self.action_first_row()  # the new top rows are what a sort is pressed for

    def action_first_row(self) -> None:
        self.move_cursor(row=0, animate=False)
        self.scroll_to(y=0, animate=False)  # the columns stay scrolled where they are

    def action_last_row(self) -> None:
        self.move_cursor(row=max(self.row_count - 1, 0), animate=False)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.action_sort_by(event.column_index)

    def visible_rows(self) -> list[Row]:
        """The rows shown, in order (after the filter and the sort)."""
        if self.report is None:
            return []
        rows = [
            r
            for r in self.report.rows
            if not self.filter_text or self.filter_text in r.key.casefold()
        ]
        column = self.report.table.column(self.sort_key)
        rows.sort(key=column.value, reverse=self.descending)
        return rows

    def _fill(self, reveal: int = -1, from_left: bool = False) -> None:
        """Rows and columns again, keeping the cursor's row and the columns' scroll (unless
        `from_left`), or scrolling column `reveal` into view (a sort by a column off to the
        right)."""
        keep = None
        if self.row_count and 0 <= self.cursor_row < self.row_count:
            keep = self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value
        across = 0 if from_left else self.scroll_offset.x  # a refill keeps the columns' scroll
        self.clear(columns=True)
        if self.report is None:
            return
        cells, widths = self._report_cells(self.report)
        for i, column in enumerate(self.columns_spec):
            if self.sort_column >= 0:
                sorted_here = i == self.sort_column
            else:
                sorted_here = column.key == self.sort_key and column.share_of is None
            mark = (" ▼" if self.descending else " ▲") if sorted_here else ""
            # Widths of our own: DataTable measures its cells only once idle, and a refill
            # drawn before that (on a resize) kept the header's width for the rows.
            label = column.header + mark
            self.add_column(Text(label), key=str(i), width=max(widths[i], cell_len(label)))
        self._shown = self.visible_rows()
        for row in self._shown:
            self.add_row(*cells[row.key], key=row.key)
        if keep is not None:
            try:
                self.move_cursor(row=self.get_row_index(keep))
            except RowDoesNotExist:  # filtered out
                self.move_cursor(row=0)
        self.refresh()
        self.call_after_refresh(self._scroll_columns, across, reveal)

    def _scroll_columns(self, across: float, reveal: int) -> None:
        self.scroll_to(x=across, animate=False)
        if 0 < reveal < len(self.columns):  # the fixed Name column is always in view
            x, _, width, _ = self._get_column_region(reveal)
            offset = self._get_fixed_offset()
            region = Region(x, int(self.scroll_y) + offset.top, width, 1)
            self.scroll_to_region(region, animate=False, spacing=offset, force=True)

    def _report_cells(self, report: ScopeReport) -> tuple[dict[str, list[Text]], list[int]]:
        """Each row's cells, and each column's widest cell."""
        key = (id(report), self.name_width, self.narrow)
        kept = _CELLS.get(key)
        if kept is not None and kept[0] is report:
            _CELLS.move_to_end(key)
            return kept[1], kept[2]
        totals = report.totals
        columns = self.columns_spec
        cells = {
            row.key: [
                Text(
                    printable(_cell(row, c, totals, self.name_width)),
                    justify="right" if c.numeric else "left",
                )
                for c in columns
            ]
            for row in report.rows
        }
        widths = [0] * len(columns)
        for row_cells in cells.values():
            widths = [max(w, c.cell_len) for w, c in zip(widths, row_cells, strict=True)]
        _CELLS[key] = (report, cells, widths)
        while len(_CELLS) > CELLS_KEPT:
            _CELLS.popitem(last=False)
        return cells, widths

    def row_at_cursor(self) -> Row | None:
        shown = self._shown
        return shown[self.cursor_row] if 0 <= self.cursor_row < len(shown) else None


def _cell(row: Row, column: Column, totals: Totals, name_width: int) -> str:
    if column.key == "name":
        return _cut(row.name, name_width)
    if column.key == "shapes":
        return _cut(row.shapes, SHAPES_CELLS)
    return column.text(row, totals)


def _cut(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"
