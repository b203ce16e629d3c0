"""StatsTable: a table of the spec (present/table_spec.py), showing text, sorting on raw values."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.console import JustifyMethod
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from tui.model.analysis.kernels import KernelStat
from tui.model.analysis.ops import OpStat
from tui.model.present import vocabulary as v
from tui.model.present.names import ShownNames
from tui.model.present.table_spec import Column
from tui.model.present.tables import AnyScopeReport
from tui.model.text import printable
from tui.widgets.column_table import ColumnTable

CELLS_KEPT = 8  # reports whose cells are kept
# Each report's cells, made once for every table: `x`, `v` and `t` come back to the same reports
# (the trace keeps them), and making the cells is half the cost of filling the table.
_CELLS: OrderedDict[
    tuple[int, int, bool, bool], tuple[AnyScopeReport, dict[str, list[Text]], list[int]]
] = OrderedDict()
NAME_CELLS = 48  # kernel names run to hundreds of characters: the table shows their start
SHAPES_CELLS = 40  # so are the input shapes of an op with many inputs
# At 80 columns these come first (the rest scroll into view to their right).
NARROW_FIRST = (v.NAME, v.INPUT_SHAPES, v.SELF_CPU, v.CPU_TOTAL, v.SELF_CUDA, v.CUDA_TOTAL, v.CALLS)
# Cut to a width in the pane (the column's key: its width).
CUT = {"name": NAME_CELLS, "shapes": SHAPES_CELLS}
NARROW_BELOW = 120  # columns


class StatsTable(ColumnTable):
    """Rows sorted on raw values by the spec's sort keys (the same keys as `summary --sort`);
    a sort, a filter and a new scope go to the top (the rows there are new)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(str(n), f"sort_by({n - 1})", f"Sort by column {n}", show=False)
            for n in range(1, 10)
        ),
    ]

    def __init__(self, names: ShownNames, *, id: str | None = None) -> None:
        # The Name column stays in view while the others scroll right.
        super().__init__(cursor_type="row", zebra_stripes=True, fixed_columns=1, id=id)
        self.names = names  # how names are shown (C++ names demangled, or as recorded)
        self.report: AnyScopeReport | None = None
        self.name_width = NAME_CELLS
        self.narrow = False
        self.table_name = ""
        self.sort_key = ""
        self.sort_column = -1  # the column pressed, which shows the mark (-1: the default's)
        self.descending = True
        self.filter_text = ""
        self._shown: Sequence[OpStat | KernelStat] = []

    @property
    def columns_spec(self) -> list[Column[OpStat] | Column[KernelStat]]:
        """The spec's columns shown, in the pane's order."""
        if self.report is None:
            return []
        columns = self.report.columns
        return [columns[i] for i in self.column_order]

    @property
    def column_order(self) -> list[int]:
        """The spec's shown columns, by index, in the pane's order (at 80 columns the
        NARROW_FIRST ones first)."""
        headers = [c.header for c in self.report.columns] if self.report is not None else []
        everything = list(range(len(headers)))
        if not self.narrow:
            return everything
        first = [i for h in NARROW_FIRST for i in everything if headers[i] == h]
        return first + [i for i in everything if i not in first]

    def fit_width(self, width: int) -> None:
        """Columns and the Name cut for a pane `width` columns wide."""
        narrow = width < NARROW_BELOW
        # At 80 columns: the five numbers and their padding take 56 cells with the scrollbar.
        name_width = NAME_CELLS if not narrow else max(16, width - 64)
        if (narrow, name_width) != (self.narrow, self.name_width):
            self.narrow, self.name_width = narrow, name_width
            self._fill()

    def show(self, report: AnyScopeReport, keep_place: bool = False) -> None:
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
        order = self.column_order
        if self.report is None or column >= len(order):
            return
        spec = self.report.columns[order[column]]
        key = spec.key
        pressed_again = column == self.sort_column or (
            self.sort_column < 0 and key == self.sort_key and spec.share_of is None
        )
        if pressed_again:
            self.descending = not self.descending
        else:
            self.descending = spec.numeric  # times and counts: largest first
        self.sort_key, self.sort_column = key, column
        self._fill(reveal=column)
        self.action_first_row()  # the new top rows are what a sort is pressed for

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.action_sort_by(event.column_index)

    def visible_rows(self) -> Sequence[OpStat | KernelStat]:
        """The rows shown, in order (after the filter and the sort)."""
        if self.report is None:
            return []
        return self.report.ordered(self.sort_key, self.descending, self.filter_text)

    def renamed(self) -> None:
        """The rows again with names in their new form (`M`)."""
        self._fill()

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
        for i, at in enumerate(self.column_order):
            column = self.report.columns[at]
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

    def _report_cells(self, report: AnyScopeReport) -> tuple[dict[str, list[Text]], list[int]]:
        """Each row's cells, and each column's widest cell."""
        key = (id(report), self.name_width, self.narrow, self.names.raw)
        kept = _CELLS.get(key)
        if kept is not None and kept[0] is report:
            _CELLS.move_to_end(key)
            return kept[1], kept[2]
        order = self.column_order
        columns = [report.columns[i] for i in order]
        widths_cut = [self.name_width if c.key == "name" else CUT.get(c.key, 0) for c in columns]
        justify: list[JustifyMethod] = ["right" if c.numeric else "left" for c in columns]
        named = [c.key == "name" for c in columns]
        shown = self.names.text
        cells = {
            key: [
                Text(printable(_cut(text, cut) if cut else text), justify=side)
                for text, cut, side in zip(
                    (shown(t) if n else t for t, n in zip(texts, named, strict=True)),
                    widths_cut,
                    justify,
                    strict=True,
                )
            ]
            for key, texts in report.texts(order).items()
        }
        widths = [0] * len(columns)
        for row_cells in cells.values():
            widths = [max(w, c.cell_len) for w, c in zip(widths, row_cells, strict=True)]
        _CELLS[key] = (report, cells, widths)
        while len(_CELLS) > CELLS_KEPT:
            _CELLS.popitem(last=False)
        return cells, widths

    def row_at_cursor(self) -> OpStat | KernelStat | None:
        shown = self._shown
        return shown[self.cursor_row] if 0 <= self.cursor_row < len(shown) else None


def _cut(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"
