"""RankScreen: the rank table of a folder of rank traces; enter opens a rank's timeline on top of
it (the app pushes that rank's TraceScreen), and `b` there comes back here."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen

from tui.model.analysis.rank_compare import RankReport
from tui.model.analysis.rank_stats import RankFailed
from tui.screens.keys import COMMON
from tui.widgets.key_footer import KeyFooter
from tui.widgets.rank_view import RankView


class RankScreen(Screen[None]):
    """Which rank is slow and why; `shown` is the rank last opened, the cursor's place when the
    user comes back."""

    BINDINGS: ClassVar[list[BindingType]] = [*COMMON]
    HELP_TITLE = "The rank set"

    def __init__(self, folder: str, report: RankReport, failed: list[RankFailed]) -> None:
        super().__init__()
        self.view = RankView(folder, report, failed)
        self.shown: int | None = None

    def compose(self) -> ComposeResult:
        yield self.view
        yield KeyFooter()

    def on_screen_resume(self) -> None:
        if self.shown is not None and self.view.is_mounted:  # back from a rank's timeline
            self.view.show_rank(self.shown)
