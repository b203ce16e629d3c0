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
        self.shown = False  # blank until the timeline's first window: not a frame of `|0 ns`

    def show(
        self, window: tuple[int, int], gutter: int, cells: int, marked: tuple[int, int] | None
    ) -> None:
        self.window, self.left, self.cells, self.marked = window, gutter, cells, marked
        self.shown = True
        self.refresh()

    def render(self) -> Text:
        if not self.shown:
            return Text("")
        width = self.size.width
        cells = max(min(self.cells, width - self.left), 1)
        t0, t1 = self.window
        line = [" "] * width
        head = f" {format_duration(t1 - t0)} shown"[: self.left]
        line[: len(head)] = head
        bar = self._range_bar(cells)
        taken = range(0) if bar is None else range(bar[0] - 1, bar[0] + len(bar[1]) + 1)
        for col, label in ticks(t0, t1, cells):
            x = self.left + col
            tick = "|" + label
            clear = all(c == " " for c in line[x : x + len(tick)])
            # A label the range would cut is left out, not overwritten.
            if x + len(tick) <= width and clear and not _overlaps(x, len(tick), taken):
                line[x : x + len(tick)] = tick
        if bar is not None:
            start, text = bar
            line[start : start + len(text)] = text
        out = Text("".join(line))
        if bar is not None:
            out.stylize("bold yellow", bar[0], bar[0] + len(bar[1]))
        return out

    def _range_bar(self, cells: int) -> tuple[int, str] | None:
        """The range as (column, `├── 1.2 ms ──┤`) over its cells, clipped to the view; its
        length goes beside it when the range is too narrow to hold it."""
        if self.marked is None:
            return None
        t0, t1 = self.window
        a, b = self.marked
        x0 = max(int((a - t0) * cells // (t1 - t0)), 0)
        x1 = min(int((b - t0) * cells // (t1 - t0)), cells - 1)
        if x1 < 0 or x0 > cells - 1 or b < t0 or a > t1:
            return None
        span = x1 - x0 + 1
        label = f" {format_duration(b - a)} "
        bar = ("├" if a >= t0 else "─") + "─" * max(span - 2, 0) + ("┤" if b <= t1 else "─")
        bar = bar[:span]
        if len(label) + 2 <= span:
            middle = (span - len(label)) // 2
            bar = bar[:middle] + label + bar[middle + len(label) :]
        elif x0 + span + len(label) <= cells:
            bar += label
        elif x0 >= len(label):
            x0 -= len(label)
            bar = label + bar
        return self.left + x0, bar


def _overlaps(x: int, length: int, taken: range) -> bool:
    return x < taken.stop and taken.start < x + length
