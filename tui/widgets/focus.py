"""Which widget has the focus, as the keys after this one will find it."""

from __future__ import annotations

from textual.widget import Widget


def is_focused(widget: Widget) -> bool:
    """Whether `widget` has the focus now. `has_focus` follows only once the widget has taken
    its Focus event, after the keys already typed: judged by it, the second of two fast `tab`s
    or an `escape` just after a pane opens acts as if the first key had not happened."""
    return widget.is_attached and widget.screen.focused is widget


def focus_now(widget: Widget) -> None:
    """Give `widget` the focus before the next key is read (`focus()` waits its turn behind
    the keys already typed)."""
    widget.screen.set_focus(widget)
