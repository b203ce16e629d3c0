"""RankView: the rank table of a folder of rank traces, its rank x step matrix and the
collectives that waited longest; `enter` on a rank opens its timeline, on a collective the
timeline of the rank that waited longest in it, there."""

from __future__ import annotations

from typing import ClassVar

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
from tui.model.text import printable
from tui.widgets.column_table import ColumnTable
from tui.widgets.focus import focus_now, is_focused

TOP_COLLECTIVES = 20


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
        Binding("enter", "open_rank", "Open the rank's timeline (on a collective: there)"),
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
        yield ColumnTable(cursor_type="row", zebra_stripes=True, fixed_columns=1, id="ranks")
        matrix = ColumnTable(cursor_type="row", fixed_columns=1, id="matrix", classes="part")
        matrix.border_title = "Own work per step: step time less collective wait (* stands out)"
        yield matrix
        collectives = ColumnTable(cursor_type="row", id="collectives", classes="part")
        collectives.border_title = "Collectives by wait (all ranks)"
        yield collectives

    def on_mount(self) -> None:
        ranks = self.query_one("#ranks", DataTable)
        table = RANKS.view(rank_lines(self.report))
        ranks.add_columns(*table.headers)
        for line in table.rows:
            marked = line.row.rank in (self.report.straggler, self.report.slowest)
            style = "bold yellow" if marked else ""
            ranks.add_row(
                *(Text(c, style=style) for c in table.row_cells(line)), key=str(line.row.rank)
            )
        collectives = self.query_one("#collectives", DataTable)
        waits = COLLECTIVES.view(top_collectives(self.report, TOP_COLLECTIVES))
        collectives.add_columns(*waits.headers)
        for cells in waits.cells():
            collectives.add_row(*(Text(c) for c in cells))
        self._fill_matrix()
        ranks.focus()

    def _fill_matrix(self) -> None:
        """Own work per rank and step, the slow cells marked."""
        matrix = self.query_one("#matrix", DataTable)
        table = matrix_view(self.report)
        headers, rows = table.headers, table.cells()
        if len(headers) < 2:
            matrix.add_column("No ProfilerStep#N in these traces: no step matrix")
            return
        matrix.add_columns(*(h.removeprefix("ProfilerStep") for h in headers))
        for i, row in enumerate(rows):
            cells = [Text(row[0])]
            for j, cell in enumerate(row[1:]):
                slow = (i, j) in self.report.slow_cells
                cells.append(Text(cell, justify="right", style="bold red" if slow else ""))
            matrix.add_row(*cells, key=row[0])

    def action_open_rank(self) -> None:
        ranks = self.query_one("#ranks", DataTable)
        if ranks.row_count and 0 <= ranks.cursor_row < ranks.row_count:
            self.post_message(self.RankChosen(self.report.rows[ranks.cursor_row].rank))

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
