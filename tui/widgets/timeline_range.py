"""The range being measured on the timeline: `r` at one point and then at another, `R` to
clear it, or a drag of the mouse across the cells. Shown by the ruler, scoped to by the panes."""

from __future__ import annotations

from tui.model.timescale import format_duration, format_time

Span = tuple[int, int]


def range_said(marked: Span) -> str:
    a, b = marked
    return f"Range {format_duration(b - a)}: +{format_time(a)} to +{format_time(b)}"


class RangeMarker:
    """The marked range (None for none), the first point of one being marked, and a drag."""

    def __init__(self) -> None:
        self.marked: Span | None = None
        self._start: Span | None = None  # `r` pressed once: the range's first point
        self._drag_x: int | None = None
        self.dragged = False  # the click ending a drag must not also select

    def point(self, here: Span) -> tuple[bool, str]:
        """`r` at `here` (a slice's span, or a moment): whether the marked range changed, and
        what to say."""
        if self._start is None:
            self._start = here
            self.marked = here if here[1] > here[0] else None
            return True, (
                f"Range from +{format_time(here[0])}: select another slice (or move) and press r "
                "again."
            )
        lo, hi = min(self._start[0], here[0]), max(self._start[1], here[1])
        if hi <= lo:  # the same point twice
            return False, "A range needs two points apart: select another slice, or move, first."
        self._start = None
        self.marked = (lo, hi)
        return True, range_said(self.marked)

    def clear(self) -> str | None:
        """`R`: what to say when there was nothing to clear."""
        self._start = None
        was, self.marked = self.marked, None
        return None if was is not None else "No range marked: r marks one (or drag with the mouse)."

    def press(self, x: int, gutter: int) -> None:
        self._drag_x = x if x >= gutter else None

    def release(self, x: int, gutter: int) -> tuple[int, int] | None:
        """The columns of the cells area a drag went across, or None when it was no drag."""
        start, self._drag_x = self._drag_x, None
        if start is None or abs(x - start) < 2 or x < gutter:
            return None
        self._start = None
        self.dragged = True
        return min(start, x) - gutter, max(start, x) - gutter
