"""What every pane of the trace screen's pane slot posts: the screen holding it does the rest."""

from __future__ import annotations

from textual.message import Message


class PaneDismissed(Message):
    """A pane asks to close (escape from its table): its slot closes it and the details come
    back in its place."""
