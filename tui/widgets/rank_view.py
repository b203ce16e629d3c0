"""RankView: the rank table of a folder of rank traces, its rank x step matrix and the
collectives that waited longest; `enter` on a rank opens its timeline."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from tui.model.analysis.rank_compare import RankReport
from tui.model.present.rank_pass import RankFailed
from tui.model.present.rank_report import (
    COLLECTIVE_HEADERS,
    RANK_HEADERS,
    collective_cells,
    headline,
    matrix_cells,
    rank_cells,
    top_collectives,
)
from tui.model.text import printable

TOP_COLLECTIVES = 20


class RankView(Vertical):
    """Which rank is slow and why, for a folder of one job's rank traces."""

    DEFAULT_CSS = """
    RankView { height: 1fr; }
    RankView > #rank-head { height: auto; max-height: 6; padding: 0 1; background: $boost; }
    RankView > #ranks { height: auto; max-height: 50%; }
    RankView > #matrix { height: auto; max-height: 35%; padding: 0 1; border-top: solid $primary;
        overflow-y: auto; }
    RankView > #collectives { height: 1fr; min-height: 4; border-top: solid $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_rank", "Open the rank's timeline"),
        Binding("tab,shift+tab", "other_table", "Ranks / collectives", show=False),
    ]

    class RankChosen(Message):
        def __init__(self, rank: int) -> None:
            super().__init__()
            self.rank = rank

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
        head.append("\n(enter: open a rank's timeline; there b: back here, < >: other rank)")
        yield Static(head, id="rank-head")
        yield DataTable[Text](cursor_type="row", zebra_stripes=True, fixed_columns=1, id="ranks")
        yield Static(self._matrix(), id="matrix")
        yield DataTable[Text](cursor_type="row", zebra_stripes=True, id="collectives")

    def on_mount(self) -> None:
        ranks = self.query_one("#ranks", DataTable)
        ranks.add_columns(*RANK_HEADERS)
        for row in self.report.rows:
            marked = row.rank in (self.report.straggler, self.report.slowest)
            cells = [
                Text(c, style="bold yellow" if marked else "") for c in rank_cells(self.report, row)
            ]
            ranks.add_row(*cells, key=str(row.rank))
        collectives = self.query_one("#collectives", DataTable)
        collectives.add_columns(*COLLECTIVE_HEADERS)
        for m in top_collectives(self.report, TOP_COLLECTIVES):
            collectives.add_row(*(Text(c) for c in collective_cells(m)))
        ranks.focus()

    def _matrix(self) -> Text:
        """Own work per rank and step, the slow cells marked (the steps that fit the width)."""
        headers, rows = matrix_cells(self.report)
        if len(headers) < 2:
            return Text("No ProfilerStep#N in these traces: no step matrix.")
        width = max(len(c) for r in rows for c in r[1:]) + 1
        width = max(width, 9)
        out = Text("Own work per step (step time less collective wait; * stands out)\n")
        out.append(
            "rank  "
            + "".join(h.removeprefix("ProfilerStep")[:width].rjust(width) for h in headers[1:])
        )
        for i, row in enumerate(rows):
            out.append(f"\n{row[0]:>4}  ")
            for j, cell in enumerate(row[1:]):
                slow = (i, j) in self.report.slow_cells
                out.append(cell.rjust(width), style="bold red reverse" if slow else "")
        return out

    def action_open_rank(self) -> None:
        ranks = self.query_one("#ranks", DataTable)
        if ranks.row_count and 0 <= ranks.cursor_row < ranks.row_count:
            self.post_message(self.RankChosen(self.report.rows[ranks.cursor_row].rank))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "ranks":
            self.action_open_rank()

    def action_other_table(self) -> None:
        ranks = self.query_one("#ranks", DataTable)
        (self.query_one("#collectives", DataTable) if ranks.has_focus else ranks).focus()
