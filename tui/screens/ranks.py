"""RankScreen: the rank table of a folder of rank traces; enter loads a rank's trace and shows
its timeline on top of the table (`<` `>` there step to the next rank, `b` comes back here)."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen

from tui.model.analysis.rank_compare import RankReport
from tui.model.analysis.rank_stats import RankFailed
from tui.model.ingest.rank_folder import RankFiles
from tui.screens.keys import COMMON
from tui.screens.loading import Load, LoadScreen
from tui.widgets.key_footer import KeyFooter
from tui.widgets.rank_view import RankView


class RankScreen(Screen[None]):
    """Which rank is slow and why; `shown` is the rank last opened, the cursor's place when the
    user comes back."""

    BINDINGS: ClassVar[list[BindingType]] = [*COMMON]
    HELP_TITLE = "The rank set"

    def __init__(
        self, ranks: RankFiles, report: RankReport, failed: list[RankFailed], load: Load
    ) -> None:
        super().__init__()
        self.ranks = ranks
        self.view = RankView(ranks.folder, report, failed)
        self.shown: int | None = None
        self._load = load  # how a rank loads: its cache, workers and the quit flag
        self._window: tuple[int, int] | None = None  # the next rank's window, absolute
        self._at_collective = False  # the next rank opens at a collective: select its kernel

    def compose(self) -> ComposeResult:
        yield self.view
        yield KeyFooter()

    def on_screen_resume(self) -> None:
        if self.shown is not None and self.view.is_mounted:  # back from a rank's timeline
            self.view.show_rank(self.shown)

    async def on_rank_view_rank_chosen(self, message: RankView.RankChosen) -> None:
        message.stop()
        if self.app.screen is not self:
            # Chosen while no longer in front: an enter typed in a burst after the one that
            # opened a rank, which typed slowly reaches that rank's load screen and does
            # nothing (opened, it replaced that load with the rank the cursor had moved to).
            return
        self._at_collective = message.window_ns is not None
        await self.open(message.rank, message.window_ns)

    async def step(self, step: int, window_ns: tuple[int, int] | None) -> None:
        """`<` `>` on the timeline of the rank shown: the rank `step` away, at the same time."""
        assert self.shown is not None
        order = list(self.ranks.files)
        await self.open(order[(order.index(self.shown) + step) % len(order)], window_ns)

    async def open(self, rank: int, window_ns: tuple[int, int] | None) -> None:
        """Load `rank`'s trace (through the cache) over this table, to open at `window_ns`."""
        self.shown, self._window = rank, window_ns
        load = LoadScreen(replace(self._load, path=str(self.ranks.files[rank]), rank=rank))
        if self.app.screen is self:
            await self.app.push_screen(load)
        else:  # `step`, from a rank's timeline (in front): the next rank takes its place
            await self.app.switch_screen(load)

    def rank_title(self, rank: int) -> str:
        return f"rank {rank} · {self.ranks.files[rank].name}"

    def arrival(self) -> tuple[tuple[int, int] | None, bool]:
        """Where the rank just loaded opens, and whether at a collective's kernel (once)."""
        arrival = (self._window, self._at_collective)
        self._window, self._at_collective = None, False
        return arrival

    async def come_back(self) -> None:
        """Back to this table from what was shown over it."""
        while self.app.screen is not self:
            await self.app.pop_screen()
