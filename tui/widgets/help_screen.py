"""HelpScreen: the keys, generated from the bindings so it cannot drift from them."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

_KEY_NAMES = {
    "comma": ",",
    "full_stop": ".",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "slash": "/",
    "question_mark": "?",
    "escape": "esc",
    "right_parenthesis": ")",
}


def describe_bindings(bindings: list[BindingType]) -> list[tuple[str, str]]:
    """(keys, description) for each binding, keys as a user types them."""
    rows = []
    for b in bindings:
        if not isinstance(b, Binding) or not b.description:
            continue
        keys = " ".join(_KEY_NAMES.get(k.strip(), k.strip()) for k in b.key.split(","))
        rows.append((keys, b.description))
    return rows


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

    def __init__(self, bindings: list[BindingType]) -> None:
        super().__init__()
        self.rows = describe_bindings(bindings)

    def compose(self) -> ComposeResult:
        width = max(len(k) for k, _ in self.rows)
        text = Text("Keys\n\n", style="bold")
        for keys, description in self.rows:
            text.append(f"{keys:>{width}}  ", style="bold")
            text.append(f"{description}\n")
        text.append(
            "\nMouse: click selects a slice, the wheel scrolls rows, "
            "ctrl+wheel or shift+wheel zooms."
        )
        with VerticalScroll():
            yield Static(text)
