"""StatsTable: op or kernel rows, showing formatted text but sorting on the raw numbers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from tui.model.text import printable


@dataclass(frozen=True)
class Column:
    """A column: its header, and how to get the text and the sort value from a row."""

    header: str
    text: Callable[[Any], str]
    value: Callable[[Any], Any]
    numeric: bool = True


class StatsTable(DataTable[Text]):
    """Rows sorted on raw values; the cursor stays on its row across re-sorts and filters."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(str(n), f"sort_by({n - 1})", f"Sort by column {n}", show=False)
        for n in range(1, 10)
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.columns_spec: list[Column] = []
        self.rows_data: list[object] = []
        self.sort_column = 0
        self.sort_reverse = False
        self.filter_text = ""
        self._shown: list[object] = []

    def show(self, columns: list[Column], rows: list[object], sort_column: int) -> None:
        """New columns and rows (a new table kind or scope)."""
        if [c.header for c in columns] != [c.header for c in self.columns_spec]:
            self.sort_column, self.sort_reverse = sort_column, columns[sort_column].numeric
        self.columns_spec, self.rows_data = columns, rows
        self._fill()

    def set_filter(self, text: str) -> None:
        self.filter_text = text.casefold()
        self._fill()

    def action_sort_by(self, column: int) -> None:
        if column >= len(self.columns_spec):
            return
        if column == self.sort_column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column = column
            self.sort_reverse = self.columns_spec[column].numeric  # time columns: largest first
        self._fill()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.action_sort_by(event.column_index)

    def visible_rows(self) -> list[object]:
        """The rows shown, in order (after the filter and the sort)."""
        if not self.columns_spec:
            return []
        name = self.columns_spec[0].value
        rows = [
            r
            for r in self.rows_data
            if not self.filter_text or self.filter_text in str(name(r)).casefold()
        ]
        rows.sort(key=self.columns_spec[self.sort_column].value, reverse=self.sort_reverse)
        return rows

    def _fill(self) -> None:
        keep = None
        if self.row_count and 0 <= self.cursor_row < self.row_count:
            keep = self.coordinate_to_cell_key((self.cursor_row, 0)).row_key.value
        self.clear(columns=True)
        for i, column in enumerate(self.columns_spec):
            mark = (" ▼" if self.sort_reverse else " ▲") if i == self.sort_column else ""
            self.add_column(Text(column.header + mark), key=column.header)
        self._shown = self.visible_rows()
        for i, row in enumerate(self._shown):
            cells = [
                Text(printable(c.text(row)), justify="right" if c.numeric else "left")
                for c in self.columns_spec
            ]
            self.add_row(*cells, key=self._key(row, i))
        if keep is not None:
            try:
                self.move_cursor(row=self.get_row_index(keep))
            except RowDoesNotExist:  # filtered out
                self.move_cursor(row=0)
        self.refresh()

    def _key(self, row: object, i: int) -> str:
        return str(self.columns_spec[0].value(row)) if self.columns_spec else str(i)

    def row_at_cursor(self) -> object | None:
        shown = self._shown
        return shown[self.cursor_row] if 0 <= self.cursor_row < len(shown) else None
