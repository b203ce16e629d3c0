"""DiffPane: what changed from BASE to NEW, as the op, kernel or region table ranked by the
largest change of a column, with a name filter; enter jumps to the row's op in the shown trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from rich.console import JustifyMethod
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Input, Static

from tui.model.analysis.diff import DiffRow, TraceDiff, ranked
from tui.model.analysis.ops import op_rows
from tui.model.present.diff_report import column_header, sorts_for, tables, view
from tui.model.present.diff_tables import SORTS
from tui.model.text import printable
from tui.model.timescale import format_duration
from tui.model.trace import Trace
from tui.screens.error import guarded
from tui.widgets.column_table import ColumnTable
from tui.widgets.focus import focus_now, is_focused
from tui.widgets.key_footer import TextBox
from tui.widgets.pane import Pane, PaneContext, SlicesChosen
from tui.widgets.stats_table import NARROW_BELOW

TABLES = ("ops", "kernels", "regions")
# The pane's column order, by the spec's shown columns (diff_tables.shown): the change comes
# right after the name, so that it shows at 80 columns; BASE and NEW, the status and the calls
# follow.
_ORDER = (0, 5, 6, 3, 4, 1, 2)


@dataclass
class DiffState:
    """What the user chose in the pane: it opens so again (after `o`, say)."""

    table: str = "ops"
    sorts: dict[str, str] = field(default_factory=dict)
    filter_text: str = ""
    row_name: str | None = None


NAME_CELLS = 48
# Below NARROW_BELOW columns the Name column gives way to the others (BASE, NEW and the status
# included), which take about NARROW_OTHERS cells, as the stats pane's does.
NARROW_OTHERS = 58


class DiffPane(Pane):
    DEFAULT_CSS = """
    DiffPane { height: 50%; min-height: 12; border-top: solid $primary; }
    DiffPane > #diff-head { height: auto; max-height: 4; padding: 0 1; background: $boost; }
    DiffPane > #diff-filter { height: 1; border: none; padding: 0 1; }
    DiffPane > DataTable { height: 1fr; min-height: 5; }
    """
    FOCUS: ClassVar[str] = "#diff"  # what takes the keys when the pane opens
    HELP_TITLE = "Diff pane"  # its section of the help
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "next_table", "Ops/kernels/regions"),
        *(
            Binding(str(n), f"rank_by({n - 1})", f"Rank by the change of column {n}", show=False)
            for n in range(1, 6)
        ),
        Binding("slash", "filter", "Filter the table", show=False),
        Binding("escape", "leave", "Close (from the filter: back to the table)", show=False),
        Binding("tab,shift+tab", "other_part", "Table / filter", show=False),
    ]

    @classmethod
    def opened(cls, at: PaneContext) -> DiffPane | str:
        if at.changes is None:
            return "NEW is still loading."
        last = at.last if isinstance(at.last, DiffState) else None
        return cls(at.changes, last, at.trace, at.side)

    def __init__(self, d: TraceDiff, state: DiffState | None, shown: Trace, side: int = 0) -> None:
        super().__init__()
        self.diff = d
        self.shown, self.side = shown, side  # the trace shown (BASE: side 0), where enter goes
        state = state or DiffState()
        self.table = state.table
        self.sorts = {**sorts_for(d, None), **state.sorts}
        self.filter_text = state.filter_text
        self._row_name = state.row_name
        self._shown: list[DiffRow] = []
        self.name_cells = NAME_CELLS

    def on_resize(self, event: events.Resize) -> None:
        width = event.size.width
        cells = NAME_CELLS if width >= NARROW_BELOW else max(16, width - NARROW_OTHERS)
        if cells != self.name_cells:
            self.name_cells = cells
            if self.query("#diff"):
                self.show(self.state().row_name)

    def state(self) -> DiffState:
        grids = self.query("#diff").results(DataTable)
        grid = next(grids, None)
        if grid is None:  # closed before it was built (`D D`): as it was opened
            row = self._row_name
        elif 0 <= grid.cursor_row < len(self._shown):
            row = self._shown[grid.cursor_row].name
        else:
            row = None
        return DiffState(self.table, dict(self.sorts), self.filter_text, row)

    def compose(self) -> ComposeResult:
        yield Static(id="diff-head")
        yield TextBox(
            [("enter", "Back to the table (the filter stays)"), ("escape", "Back")],
            placeholder="filter names (/)",
            id="diff-filter",
            select_on_focus=False,
        )
        yield ColumnTable(cursor_type="row", zebra_stripes=True, fixed_columns=1, id="diff")

    def on_mount(self) -> None:
        self.query_one("#diff-filter", Input).value = self.filter_text
        self.show(self._row_name)

    def show(self, row_name: str | None = None) -> None:
        """Fill the table: the rows of this table whose name holds the filter, ranked; the
        cursor on `row_name` where it is shown, else on the first row."""
        column = self.sorts[self.table]
        rows = ranked(tables(self.diff)[self.table], column)
        if self.filter_text:
            rows = [r for r in rows if self.filter_text.lower() in r.name.lower()]
        self._shown = rows
        spec = view(self.table, rows, column)
        headers, cells = spec.headers, spec.cells()
        order = [*_ORDER, *range(len(_ORDER), len(headers))]
        justify: list[JustifyMethod] = [
            "right" if spec.columns[k].numeric else "left" for k in order
        ]
        grid = self.query_one("#diff", DataTable)
        grid.clear(columns=True)
        for k in order:
            grid.add_column(headers[k], key=str(k))
        for cell_row in cells:
            name = cell_row[0]
            cut = self.name_cells
            shown = name if len(name) <= cut else name[: cut - 1] + "…"
            grid.add_row(
                Text(shown),
                *(
                    Text(cell_row[k], justify=side)
                    for k, side in zip(order[1:], justify[1:], strict=True)
                ),
            )
        names = [r.name for r in rows]
        if rows:
            grid.move_cursor(row=names.index(row_name) if row_name in names else 0)
        self._show_head()

    def _show_head(self) -> None:
        column = self.sorts[self.table]
        grid = self.query_one("#diff", DataTable)
        row = self._shown[grid.cursor_row] if 0 <= grid.cursor_row < len(self._shown) else None
        self.query_one("#diff-head", Static).update(self._head(column, len(self._shown), row))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_head()

    def _head(self, column: str, shown: int, row: DiffRow | None) -> Text:
        d = self.diff
        step = ""
        if d.base.step_median_ns is not None and d.new.step_median_ns is not None:
            before, change = d.base.step_median_ns, d.new.step_median_ns - d.base.step_median_ns
            pct = f" ({100.0 * change / before:+.1f}%)" if before else ""
            step = (
                f"step {format_duration(d.base.step_median_ns)} -> "
                f"{format_duration(d.new.step_median_ns)}{pct} · "
            )
        keys = " ".join(
            f"{k + 1} {column_header(c)}" for k, c in enumerate(SORTS[self.table].values())
        )
        lines = [
            f"{step}{d.base.verdict} -> {d.new.verdict} · {d.matched_share:.0%} matched",
            f"{self.table.capitalize()} by change in {column_header(column)} ({shown}) · "
            f"x: next table · {keys}",
        ]
        if row is not None:  # names are cut in the table: the one under the cursor in full
            lines.append(f"{row.status}: {row.name}")
        elif shown == 0 and self.filter_text:  # as the stats pane says it
            lines.append(
                f"No {self.table[:-1]} name holds “{self.filter_text}”: edit or clear the filter."
            )
        elif shown == 0:
            lines.append(f"No {self.table} in either trace: x shows the next table.")
        return Text("\n".join(printable(line) for line in lines))

    def action_next_table(self) -> None:
        self.table = TABLES[(TABLES.index(self.table) + 1) % len(TABLES)]
        self.show()

    def action_rank_by(self, k: int) -> None:
        columns = list(SORTS[self.table].values())
        if k < len(columns):
            self.sorts[self.table] = columns[k]
            self.show()

    def action_filter(self) -> None:
        focus_now(self.query_one("#diff-filter", Input))

    def action_other_part(self) -> None:
        grid = self.query_one("#diff", DataTable)
        focus_now(self.query_one("#diff-filter", Input) if is_focused(grid) else grid)

    def action_leave(self) -> None:
        if is_focused(self.query_one("#diff-filter", Input)):
            focus_now(self.query_one("#diff", DataTable))
        else:
            self.dismiss()

    @guarded
    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.filter_text = event.value
        self.show()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        focus_now(self.query_one("#diff", DataTable))

    @guarded
    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self._shown):
            name = self._shown[event.cursor_row].name
            rows = op_rows(self.shown, name)
            there = "NEW" if self.side == 0 else "BASE"
            said = (
                f"{printable(name)} is only in {there}: o shows {there}." if not len(rows) else None
            )
            self.post_message(SlicesChosen(rows, mark=True, jump=True, said=said))
