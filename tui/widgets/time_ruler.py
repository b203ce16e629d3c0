"""TimeRuler: tick labels over the timeline, in units that follow the zoom."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from tui.model.timescale import format_duration, ticks


class TimeRuler(Widget):
    """One line of time ticks aligned with the timeline's cells."""

    DEFAULT_CSS = """
    TimeRuler { height: 1; background: $boost; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.window = (0, 1)
        self.left = 0

    def show(self, window: tuple[int, int], gutter: int) -> None:
        self.window, self.left = window, gutter
        self.refresh()

    def render(self) -> Text:
        width = self.size.width
        cells = max(width - self.left, 1)
        t0, t1 = self.window
        line = [" "] * width
        head = f" {format_duration(t1 - t0)} shown"[: self.left]
        line[: len(head)] = head
        for col, label in ticks(t0, t1, cells):
            x = self.left + col
            text = "|" + label
            if x + len(text) <= width and all(c == " " for c in line[x : x + len(text)]):
                line[x : x + len(text)] = text
        return Text("".join(line))
