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
    "less_than_sign": "<",
    "greater_than_sign": ">",
}


def describe_bindings(bindings: list[BindingType]) -> list[tuple[str, str]]:
    """(keys, description) for each binding, keys as a user types them; bindings that differ
    only by a digit (`1`-`9`: sort by column N) make one row."""
    rows: list[tuple[str, str]] = []
    digits = [b for b in bindings if isinstance(b, Binding) and b.key.isdigit() and b.description]
    for b in bindings:
        if not isinstance(b, Binding) or not b.description:
            continue
        if b in digits[1:]:
            continue
        if b is (digits[0] if len(digits) > 1 else None):
            rows.append((f"{digits[0].key}-{digits[-1].key}", b.description.rstrip("0123456789 ")))
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

    def __init__(self, sections: list[tuple[str, list[BindingType]]]) -> None:
        super().__init__()
        self.sections = [(title, describe_bindings(b)) for title, b in sections]
        self.rows = [row for _, rows in self.sections for row in rows]

    def compose(self) -> ComposeResult:
        width = max(len(k) for k, _ in self.rows)
        text = Text("Keys\n", style="bold")
        for title, rows in self.sections:
            text.append(f"\n{title}\n", style="bold underline")
            for keys, description in rows:
                text.append(f"{keys:>{width}}  ", style="bold")
                text.append(f"{description}\n")
        text.append(
            "\nMouse: click selects a slice, drag marks a range, the wheel scrolls rows, "
            "ctrl+wheel or shift+wheel zooms."
        )
        with VerticalScroll():
            yield Static(text)
