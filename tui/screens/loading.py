"""LoadScreen: the progress of a load (a trace, or every rank of a rank set); q cancels."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer

from tui.screens.keys import COMMON
from tui.widgets.load_progress import LoadProgress


class LoadScreen(Screen[None]):
    """Shown while the app loads `path`; the app replaces it with what it loaded."""

    BINDINGS: ClassVar[list[BindingType]] = [*COMMON]
    HELP_TITLE = "Loading"

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        yield LoadProgress(self.path)
        yield Footer(compact=True, show_command_palette=False)

    def progress(self) -> LoadProgress:
        return self.query_one(LoadProgress)
