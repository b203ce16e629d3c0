"""The keys that act now, read from the live bindings of a screen and its focused widget.

The help and the key tests read these; the footer reads the same `Screen.active_bindings`
(Textual's), so neither can list a key that does nothing: a binding whose `check_action` says
False is not in them.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget

# Every screen's first keys: the footer lists a focused widget's keys first and its screen's
# next, so these stay in view at 80 columns whatever the pane.
COMMON: list[BindingType] = [
    Binding("q", "app.quit", "Quit"),
    Binding("question_mark", "app.help", "Help"),
]

# Textual's own keys that act only when their widget can scroll that way (the timeline, say,
# inherits a ScrollView's paging keys; it never scrolls sideways).
_ACROSS = {"scroll_left", "scroll_right", "page_left", "page_right"}
_DOWN = {"scroll_up", "scroll_down", "scroll_home", "scroll_end", "page_up", "page_down"}

# The keys as a user types them.
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


def acting(screen: Screen[object]) -> list[tuple[str, list[Binding]]]:
    """(section title, bindings) for every key that acts on `screen` now, the focused widget's
    first, then its containers', the screen's and the app's; one binding per key (the one a
    press runs). A section's title is its node's `HELP_TITLE`, else its class name."""
    sections: dict[int, tuple[str, list[Binding]]] = {}
    for active in screen.active_bindings.values():
        b = active.binding
        node = active.node
        if not active.enabled or not b.description or b.system or not _can(screen, node, b):
            continue
        title = str(getattr(node, "HELP_TITLE", type(node).__name__))
        sections.setdefault(id(node), (title, []))[1].append(b)
    return list(sections.values())


def _can(screen: Screen[object], node: DOMNode, b: Binding) -> bool:
    """Whether one of Textual's own keys can act now (ours say so through check_action)."""
    action = b.action.removeprefix("screen.")
    if action == "copy_text":  # with text selected only
        return screen.get_selected_text() is not None
    if not isinstance(node, Widget):
        return True
    # Widget's own scrolling (a table's home moves its cursor, and acts anyway).
    plain = getattr(type(node), f"action_{action}", None) is getattr(Widget, f"action_{action}", 0)
    if action in _ACROSS and plain:
        return node.allow_horizontal_scroll
    if action in _DOWN and plain:
        return node.allow_vertical_scroll
    return True


def key_name(key: str) -> str:
    return _KEY_NAMES.get(key, key)


def describe_bindings(bindings: list[Binding]) -> list[tuple[str, str]]:
    """(keys, description) rows: the keys of one action and description on one row (`up k`),
    and bindings that differ only by a digit (`1`-`9`: sort by column N) on one row."""
    rows: list[tuple[str, str]] = []
    actions: dict[tuple[str, str], int] = {}
    digits = [b for b in bindings if b.key.isdigit()]
    for b in bindings:
        if b in digits[1:] and len(digits) > 1:
            continue
        if len(digits) > 1 and b is digits[0]:
            rows.append((f"{digits[0].key}-{digits[-1].key}", b.description.rstrip("0123456789 ")))
            continue
        at = actions.get((b.action, b.description))
        if at is not None:
            rows[at] = (f"{rows[at][0]} {key_name(b.key)}", b.description)
            continue
        actions[(b.action, b.description)] = len(rows)
        rows.append((key_name(b.key), b.description))
    return rows
