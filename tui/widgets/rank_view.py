"""RankView: the rank table of a folder of rank traces, its rank x step matrix and the
collectives that waited longest; `enter` on a rank opens its timeline, on a collective the
timeline of the rank that waited longest in it, there."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

from rich.console import JustifyMethod
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from tui.model.analysis.rank_compare import Matched, RankReport
from tui.model.analysis.rank_stats import RankFailed
from tui.model.present.rank_report import headline, matrix_view, top_collectives
from tui.model.present.rank_tables import COLLECTIVES, RANKS, rank_lines
from tui.model.present.table_spec import View
from tui.model.text import printable
from tui.widgets.column_table import ColumnTable
from tui.widgets.focus import focus_now, is_focused

TOP_COLLECTIVES = 20
R = TypeVar("R")


class _RankTable(ColumnTable):
    """A table whose rows are ranks (the rank table, the step matrix)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Open the rank's timeline"),
    ]


class _CollectiveTable(ColumnTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Go to it, on the rank that waited longest"),
    ]


def _fill(table: DataTable[Text], view: View[R], style: Callable[[R], str]) -> None:
    """The view's headers and rows, numbers aligned right."""
    table.add_columns(*view.headers)
    justify: list[JustifyMethod] = ["right" if r else "left" for r in view.right_aligned]
    for row in view.rows:
        cells = zip(view.row_cells(row), justify, strict=True)
        table.add_row(*(Text(c, style=style(row), justify=j) for c, j in cells))


class RankView(Vertical):
    """Which rank is slow and why, for a folder of one job's rank traces."""

    DEFAULT_CSS = """
    RankView { height: 1fr; }
    RankView > #rank-head { height: auto; max-height: 6; padding: 0 1; background: $boost; }
    RankView > #ranks { height: auto; max-height: 45%; }
    RankView > DataTable.part { height: 1fr; min-height: 3; border-top: solid $primary; }
    """
    HELP_TITLE = "Ranks"  # its section of the help
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab,shift+tab", "other_table", "Ranks / step matrix / collectives", show=False),
    ]

    class RankChosen(Message):
        """A rank to open; `window_ns` (the traces' own clock): where, for a collective."""

        def __init__(self, rank: int, window_ns: tuple[int, int] | None = None) -> None:
            super().__init__()
            self.rank, self.window_ns = rank, window_ns

    def __init__(self, folder: str, report: RankReport, failed: list[RankFailed]) -> None:
        super().__init__()
        self.folder, self.report, self.failed = folder, report, failed

    def compose(self) -> ComposeResult:
        report = self.report
        head = Text(f" {len(report.rows)} ranks of {printable(self.folder)} ", style="bold reverse")
        head.append(f"  {headline(report)}")
        for note in report.notes:
            head.append(f"\nnote: {printable(note)}", style="yellow")
        for failed in self.failed:
            head.append(f"\nfailed: rank {failed.rank}: {printable(failed.error)}", style="red")
        head.append(
            "\n(enter: open the rank's timeline, then b: back, < >: other rank; "
            "tab: the step matrix, the collectives, where enter goes to the collective)"
        )
        yield Static(head, id="rank-head")
        yield _RankTable(cursor_type="row", zebra_stripes=True, fixed_columns=1, id="ranks")
        matrix = _RankTable(cursor_type="row", fixed_columns=1, id="matrix", classes="part")
        matrix.border_title = "Own work per step: step time less collective wait (* stands out)"
        yield matrix
        collectives = _CollectiveTable(
            cursor_type="row", fixed_columns=1, id="collectives", classes="part"
        )
        collectives.border_title = "Collectives by wait (all ranks)"
        yield collectives

    def on_mount(self) -> None:
        marked = (self.report.straggler, self.report.slowest)
        _fill(
            self.query_one("#ranks", DataTable),
            RANKS.view(rank_lines(self.report)),
            lambda line: "bold yellow" if line.row.rank in marked else "",
        )
        _fill(
            self.query_one("#collectives", DataTable),
            COLLECTIVES.view(top_collectives(self.report, TOP_COLLECTIVES)),
            lambda _: "",
        )
        self._fill_matrix()
        self.query_one("#ranks", DataTable).focus()

    def _fill_matrix(self) -> None:
        """Own work per rank and step, the slow cells marked."""
        matrix = self.query_one("#matrix", DataTable)
        table = matrix_view(self.report)
        headers, rows = table.headers, table.cells()
        if len(headers) < 2:
            matrix.add_column("No ProfilerStep#N in these traces: no step matrix")
            return
        headers = [h.removeprefix("ProfilerStep") for h in headers]
        matrix.add_columns(*headers)
        # Padded here, not justified: a right-justified cell loses the trailing space that
        # lines its unit up with a `*` above or below.
        widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(headers)]
        for i, row in enumerate(rows):
            cells = [Text(row[0].rjust(widths[0]))]
            for j, cell in enumerate(row[1:]):
                slow = (i, j) in self.report.slow_cells
                cells.append(Text(cell.rjust(widths[j + 1]), style="bold red" if slow else ""))
            matrix.add_row(*cells, key=row[0])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id in ("ranks", "matrix"):  # a matrix row is a rank too
            self.post_message(self.RankChosen(self.report.rows[event.cursor_row].rank))
        elif event.data_table.id == "collectives":
            self._go_to_collective(top_collectives(self.report, TOP_COLLECTIVES)[event.cursor_row])

    def _go_to_collective(self, c: Matched) -> None:
        """The collective on the rank that waited longest in it (its kernel the longest),
        framed with a tenth of its time either side; `<` and `>` then show the others."""
        k = max(range(len(c.ranks)), key=lambda i: c.waits_ns[i])
        start, dur = c.starts_ns[k], c.durs_ns[k]
        window = None if start is None else (start - dur // 10, start + dur + dur // 10)
        self.post_message(self.RankChosen(c.ranks[k], window))

    def action_other_table(self) -> None:
        order = [
            self.query_one(f"#{name}", DataTable) for name in ("ranks", "matrix", "collectives")
        ]
        now = next((i for i, t in enumerate(order) if is_focused(t)), -1)
        focus_now(order[(now + 1) % len(order)])

    def show_rank(self, rank: int) -> None:
        """Back from a rank's timeline: the cursor on that rank."""
        ranks = self.query_one("#ranks", DataTable)
        at = [r.rank for r in self.report.rows].index(rank)
        ranks.move_cursor(row=at)
        focus_now(ranks)
