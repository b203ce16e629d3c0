"""What the Timeline posts (as `Timeline.SelectionChanged` and `Timeline.WindowChanged`;
handlers are `on_timeline_selection_changed` and `on_timeline_window_changed`)."""

from __future__ import annotations

from textual.message import Message


class SelectionChanged(Message, namespace="timeline"):
    """Posted when the selected slice, idle gap or counter row changes.

    Attributes:
        slice: the selected slice row, or -1.
        gap: the selected idle gap (into idle_gaps(trace)), or -1.
        counter: the counter under the cursor (into counter_series(trace)), or -1.
        window: the view's time window (ns).
    """

    def __init__(self, slice: int, gap: int, counter: int, window: tuple[int, int]) -> None:
        super().__init__()
        self.slice, self.gap, self.counter, self.window = slice, gap, counter, window


class WindowChanged(Message, namespace="timeline"):
    """Posted when the visible time window, the gutter or the marked range changes."""

    def __init__(
        self, window: tuple[int, int], gutter: int, marked: tuple[int, int] | None
    ) -> None:
        super().__init__()
        self.window, self.gutter, self.marked = window, gutter, marked
