"""The footer: the keys that act now, drawn as one line."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import ClassVar, NamedTuple

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

_ENABLED, _DISABLED = Style(), Style(dim=True)
# Kept at the right end, in this order, when the keys are wider than the footer: --follow's F
# while a newer trace waits (said once in a toast that fades), then help.
_KEPT = ("newest", "app.help")  # F is the app's own binding: no namespace


class TextBox(Input):
    """A text box that says, in the footer, what the keys it does not type do there (with
    every letter typed, the footer would otherwise be empty)."""

    def __init__(
        self, keys: Sequence[tuple[str, str]], placeholder: str, id: str, select_on_focus: bool
    ) -> None:
        super().__init__(placeholder=placeholder, id=id, select_on_focus=select_on_focus)
        self.footer_keys = tuple(keys)  # (key, what it does there)


class FooterKey(NamedTuple):
    """One key as the footer shows it, and the cells it takes (`start` to `end`)."""

    key: str
    label: str
    description: str
    enabled: bool
    start: int
    end: int


def _key(key: str, label: str, text: str, enabled: bool, action: str = "") -> FooterKey:
    """`start` is 0, or below 0 for a key kept at the end (-1 the last, -2 before it...)."""
    width = cell_len(label) + (cell_len(text) + 1 if text else 0)
    kept = _KEPT.index(action) - len(_KEPT) if action in _KEPT else 0
    return FooterKey(key, label, text, enabled, kept, width)


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

    def on_resize(self) -> None:
        self._bindings_changed(self.screen)

    def shown(self) -> list[FooterKey]:
        """What the footer shows, left to right, `? Help` last. Where the keys are wider than
        the footer, the last ones before it go."""
        keys = self._acting()
        kept = sorted((k for k in keys if k.start < 0), key=lambda k: k.start)
        keys = [k for k in keys if k.start >= 0]
        room = self.size.width + 1 - sum(k.end + 1 for k in kept)  # a key: its width, a space
        if self.size.width:
            fits = itertools.takewhile(
                lambda used: used <= room, itertools.accumulate(k.end + 1 for k in keys)
            )
            keys = keys[: len(list(fits))]
        keys += kept
        shown: list[FooterKey] = []
        x = 0
        for key in keys:
            shown.append(key._replace(start=x, end=x + key.end))
            x += key.end + 1
        return shown

    def _acting(self) -> list[FooterKey]:
        """Each shown binding, one per action, its width as `end` (`start` -1: kept at the end
        when the line is cut); in a text box, the keys it names."""
        focused = self.screen.focused
        if isinstance(focused, Input):
            named = focused.footer_keys if isinstance(focused, TextBox) else ()
            return [
                _key(key, self.app.get_key_display(Binding(key, "")), text, True)
                for key, text in named
            ]
        keys: list[FooterKey] = []
        actions: set[str] = set()
        for active in self.screen.active_bindings.values():
            binding = active.binding
            if not binding.show or binding.action in actions:
                continue
            actions.add(binding.action)
            label = self.app.get_key_display(binding)
            keys.append(
                _key(binding.key, label, binding.description, active.enabled, binding.action)
            )
        return keys

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
