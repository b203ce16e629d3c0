"""TimeRuler: tick labels over the timeline, in units that follow the zoom, and the range
being measured."""

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
        self.cells = 1
        self.marked: tuple[int, int] | None = None

    def show(
        self, window: tuple[int, int], gutter: int, cells: int, marked: tuple[int, int] | None
    ) -> None:
        self.window, self.left, self.cells, self.marked = window, gutter, cells, marked
        self.refresh()

    def render(self) -> Text:
        width = self.size.width
        cells = max(min(self.cells, width - self.left), 1)
        t0, t1 = self.window
        line = [" "] * width
        head = f" {format_duration(t1 - t0)} shown"[: self.left]
        line[: len(head)] = head
        for col, label in ticks(t0, t1, cells):
            x = self.left + col
            tick = "|" + label
            if x + len(tick) <= width and all(c == " " for c in line[x : x + len(tick)]):
                line[x : x + len(tick)] = tick
        text = Text("".join(line))
        if self.marked is not None:
            self._draw_range(text, cells)
        return text

    def _draw_range(self, text: Text, cells: int) -> None:
        """The range as `├── 1.2 ms ──┤` over its columns (clipped to the view)."""
        t0, t1 = self.window
        a, b = self.marked or (0, 0)
        x0 = max(int((a - t0) * cells // (t1 - t0)), 0)
        x1 = min(int((b - t0) * cells // (t1 - t0)), cells - 1)
        if x1 < 0 or x0 > cells - 1:
            return
        span = x1 - x0 + 1
        label = f" {format_duration(b - a)} "
        bar = ("├" if a >= t0 else "─") + "─" * max(span - 2, 0) + ("┤" if b <= t1 else "─")
        bar = bar[:span]
        if len(label) + 2 <= span:
            middle = (span - len(label)) // 2
            bar = bar[:middle] + label + bar[middle + len(label) :]
        start = self.left + x0
        plain = text.plain
        text.plain = plain[:start] + bar + plain[start + len(bar) :]
        text.stylize("bold yellow", start, start + len(bar))
