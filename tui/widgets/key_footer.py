"""The footer: the keys that act now, drawn as one line."""

from __future__ import annotations

import string
from typing import ClassVar, NamedTuple

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.keys import _character_to_key
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

_ENABLED, _DISABLED = Style(), Style(dim=True)
# Keys a text box takes as text (Textual's own filter misses some: `slash` is not `/` to it).
_TYPED = {_character_to_key(c) for c in string.printable if c.isprintable()}


class FooterKey(NamedTuple):
    """One key as the footer shows it, and the cells it takes (`start` to `end`)."""

    key: str
    label: str
    description: str
    enabled: bool
    start: int
    end: int


class KeyFooter(Widget):
    """The screen's active bindings, one per action, as Textual's compact footer lays them out.

    Textual's footer is a container of one widget per key and remounts them all on every
    bindings update, which comes with each focus change: a fifth of the CPU of the key tests,
    a tenth of a pane's first open. This one is a single line, redrawn when its keys change."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-footer--key", "key-footer--description"}
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        text-overflow: clip;
    }
    KeyFooter > .key-footer--key {
        color: $footer-key-foreground;
        background: $footer-key-background;
        text-style: bold;
    }
    KeyFooter > .key-footer--description {
        color: $footer-description-foreground;
        background: $footer-description-background;
    }
    """

    _drawn: list[FooterKey] | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        # Most updates (a key pressed, the focus moved within a pane) leave the keys as drawn.
        shown = self.shown()
        if shown != self._drawn:
            self._drawn = shown
            self.refresh()

    def shown(self) -> list[FooterKey]:
        """What the footer shows, left to right (a key off the right edge included)."""
        shown: list[FooterKey] = []
        actions: set[str] = set()
        x = 0
        typing = isinstance(self.screen.focused, Input)
        for key, (_, binding, enabled, _) in self.screen.active_bindings.items():
            if not binding.show or binding.action in actions or (typing and key in _TYPED):
                continue
            actions.add(binding.action)
            label = self.app.get_key_display(binding)
            text = binding.description
            width = cell_len(label) + (cell_len(text) + 1 if text else 0)
            shown.append(FooterKey(binding.key, label, binding.description, enabled, x, x + width))
            x += width + 1
        return shown

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-footer--key", partial=True)
        text_style = self.get_component_rich_style("key-footer--description", partial=True)
        line = Text(no_wrap=True, overflow="crop", end="")
        for key in self._drawn if self._drawn is not None else self.shown():
            dim = _ENABLED if key.enabled else _DISABLED
            line.append(key.label, key_style + dim)
            if key.description:
                line.append(f" {key.description}", text_style + dim)
            line.append(" ")
        return line

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A click on a key presses it, as in Textual's footer."""
        for key in self.shown():
            if key.start <= event.x < key.end:
                if key.enabled:
                    self.app.simulate_key(key.key)
                else:
                    self.app.bell()
                return
