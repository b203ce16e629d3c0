"""HelpScreen: the keys that act where `?` was pressed, read from the live bindings (keys.py),
so it cannot drift from them nor list a key that does nothing there."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tui.screens.keys import acting, describe_bindings
from tui.widgets.key_footer import KeyFooter


class HelpScreen(ModalScreen[None]):
    """The key list; any of escape, q or ? closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 64; max-width: 100%; height: auto; max-height: 90%;
        border: round $primary; background: $panel; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close help"),
    ]

    def __init__(self, screen: Screen[object]) -> None:
        super().__init__()
        self.sections = [(title, describe_bindings(b)) for title, b in acting(screen)]
        self.rows = [row for _, rows in self.sections for row in rows]
        self.mouse: str | None = getattr(screen, "HELP_MOUSE", None)  # what the mouse does there

    def compose(self) -> ComposeResult:
        width = max(len(k) for k, _ in self.rows)
        text = Text("Keys\n", style="bold")
        for title, rows in self.sections:
            text.append(f"\n{title}\n", style="bold underline")
            for keys, description in rows:
                text.append(f"{keys:>{width}}  ", style="bold")
                text.append(f"{description}\n")
        if self.mouse is not None:
            text.append(f"\nMouse: {self.mouse}")
        with VerticalScroll():
            yield Static(text)
        yield KeyFooter()  # its own keys, not those of the screen under it
