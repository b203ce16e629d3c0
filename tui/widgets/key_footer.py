"""The footer: Textual's, rebuilt only when the keys it shows change."""

from __future__ import annotations

from typing import Any

from textual.widgets import Footer


class KeyFooter(Footer):
    """Textual's footer recomposes, mounting a widget per key, on every bindings update: each
    focus change and each key that refreshes the bindings. Most leave the keys shown as they
    were, and remounting them cost more than the key's own work (a third of a pane's first
    frame). This one recomposes only when what it would show differs."""

    _shown: tuple[tuple[Any, ...], ...] | None = None

    def _keys_shown(self) -> tuple[tuple[Any, ...], ...]:
        return tuple(
            (binding.key, binding.action, binding.description, binding.key_display, enabled, tip)
            for (_, binding, enabled, tip) in self.screen.active_bindings.values()
            if binding.show
        )

    async def recompose(self) -> None:
        if not self.is_attached:
            return
        shown = self._keys_shown()
        if shown == self._shown:
            return
        self._shown = shown
        await super().recompose()
