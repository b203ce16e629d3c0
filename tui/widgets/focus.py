"""Which widget has the focus, as the keys after this one will find it."""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.widget import Widget
from textual.widgets import Input


def is_focused(widget: Widget) -> bool:
    """Whether `widget` has the focus now. `has_focus` follows only once the widget has taken
    its Focus event, after the keys already typed: judged by it, the second of two fast `tab`s
    or an `escape` just after a pane opens acts as if the first key had not happened."""
    return widget.is_attached and widget.screen.focused is widget


def focus_now(widget: Widget) -> None:
    """Give `widget` the focus before the next key is read (`focus()` waits its turn behind
    the keys already typed)."""
    widget.screen.set_focus(widget)


class KeysFollowFocus(App[None]):
    """An app in which keys typed in one burst reach a text box the first of them opened.

    The app hands each key to the widget focused when it reads it. A fast "/addmm" reaches the
    timeline whole: its `/` opens the search box and gives it the focus, and "addmm", already
    the timeline's, come back up to the app unread. A printable key that comes up while a text
    box has the focus is one of those (the box stops every printable key it is given): it is
    typed into the box at once, as it would have been typed slowly, and runs no binding (the
    screen's `t` is not the stats pane while one types "stats"). A key read while the widget
    the last one went to has messages still waiting (those keys among them) goes there too,
    behind them: the `enter` of a fast "/addmm⏎" then reaches the box after the letters, not
    before (it searched for ''). Where a key acts is still the focus's bindings' to say."""

    _last_target: Widget | None = None

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            behind = self._last_target
            if behind is not None and behind.is_attached and behind.message_queue_size:
                if not await self._check_bindings(event.key, priority=True):
                    behind._forward_event(event)
                return
            self._last_target = self.focused or self.screen
        await super().on_event(event)

    async def _on_key(self, event: events.Key) -> None:
        # Textual runs App._on_key after this one (a handler per class): not for these keys.
        focused = self.focused
        if isinstance(focused, Input) and event.is_printable and event.character:
            event.prevent_default()
            focused.insert_text_at_cursor(event.character)
