"""FlameView: the call tree as a terminal icicle (present/icicle.py), drawn line by line with the
Line API as the timeline is: a row per depth, widths by weight, names in the cells. Arrows move
between frames, enter zooms into one, backspace zooms back out, `/` highlights matching frames."""

from __future__ import annotations

import re
import zlib
from typing import ClassVar

import numpy as np
from rich.segment import Segment
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from tui.model.analysis.call_tree import CallTree
from tui.model.patterns import MODULE_PREFIX as MODULE
from tui.model.present.icicle import Span, icicle
from tui.model.text import printable
from tui.model.timescale import format_duration


# What is shown until the pane's tree is built: a root with no weight (no rows).
def _one(value: int) -> np.ndarray:
    return np.array([value], np.int64)


EMPTY = CallTree(_one(-1), _one(-1), _one(0), _one(0), _one(0), _one(-1), [], "cpu")
# Frame colours, picked by a hash of the name so a name keeps its colour.
FRAMES = 6


class FlameView(Widget, can_focus=True):
    """An icicle of one call tree; the root row is the zoomed-into node."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "flame--selected",
        "flame--match",
        *(f"flame--frame-{k}" for k in range(FRAMES)),
    }
    DEFAULT_CSS = """
    FlameView { height: 1fr; background: $surface; }
    FlameView > .flame--selected { background: $accent; color: $text; text-style: bold; }
    FlameView > .flame--match { background: $warning; color: $background; text-style: bold; }
    FlameView > .flame--frame-0 { background: sienna; color: white; }
    FlameView > .flame--frame-1 { background: darkgoldenrod; color: white; }
    FlameView > .flame--frame-2 { background: firebrick; color: white; }
    FlameView > .flame--frame-3 { background: peru; color: black; }
    FlameView > .flame--frame-4 { background: chocolate; color: black; }
    FlameView > .flame--frame-5 { background: indianred; color: black; }
    """
    HELP_TITLE = "Flame view"  # its section of the help
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "across(-1)", "Frame before", show=False),
        Binding("right", "across(1)", "Frame after", show=False),
        Binding("up", "caller", "Caller", show=False),
        Binding("down", "callee", "Heaviest callee", show=False),
        Binding("enter", "zoom_in", "Zoom in"),
        Binding("backspace", "zoom_out", "Zoom out"),
    ]

    class FrameChosen(Message):
        """The frame under the cursor changed."""

        def __init__(self, node: int) -> None:
            super().__init__()
            self.node = node

    def __init__(self, tree: CallTree | None, *, id: str | None = None) -> None:
        """`tree`: None until the pane has built one (an empty tree is shown)."""
        super().__init__(id=id)
        self.calls = tree if tree is not None else EMPTY
        self.roots = [0]  # the zoom stack
        self.row, self.node = 0, 0  # the frame under the cursor
        self.search = ""
        self._layout: list[list[Span]] = []
        self._layout_key: tuple[int, int, int] | None = None

    def show(self, tree: CallTree) -> None:
        self.calls, self.roots, self.row, self.node = tree, [0], 0, 0
        self._layout_key = None
        self.refresh()

    def layout_rows(self) -> list[list[Span]]:
        key = (self.roots[-1], self.size.width, self.size.height)
        if key != self._layout_key:
            self._layout = icicle(self.calls, self.roots[-1], self.size.height, self.size.width)
            self._layout_key = key
        return self._layout

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, viewport.height)

    def render_line(self, y: int) -> Strip:
        rows = self.layout_rows()
        width = self.size.width
        if y >= len(rows):
            return Strip.blank(width)
        segments: list[Segment] = []
        at = 0
        needle = self.search.casefold()
        for span in rows[y]:
            if span.x0 > at:
                segments.append(Segment(" " * (span.x0 - at)))
            label = self.calls.label(span.shown)
            text = _fit(short_name(label), span.x1 - span.x0)
            if span.node == self.node:
                kind = "flame--selected"
            elif needle and self._holds(span, needle):
                kind = "flame--match"
            else:
                kind = f"flame--frame-{zlib.crc32(label.encode()) % FRAMES}"
            segments.append(Segment(text, self.get_component_rich_style(kind)))
            at = span.x1
        if at < width:
            segments.append(Segment(" " * (width - at)))
        return Strip(segments, width)

    def _move_to(self, row: int, span: Span) -> None:
        self.row, self.node = row, span.node
        self.refresh()
        self.post_message(self.FrameChosen(span.node))

    def _current(self) -> tuple[int, Span] | None:
        rows = self.layout_rows()
        if self.row < len(rows):
            for span in rows[self.row]:
                if span.node == self.node:
                    return self.row, span
        if rows:
            return 0, rows[0][0]
        return None

    def _step(self, action: str, step: int = 0) -> tuple[int, Span] | None:
        """Where `across(step)`, `caller` or `callee` goes from the frame under the cursor (None:
        nowhere, and the key is not offered)."""
        here = self._current()
        if here is None:
            return None
        row, span = here
        rows = self.layout_rows()
        if action == "across":
            i = rows[row].index(span) + step
            return (row, rows[row][i]) if 0 <= i < len(rows[row]) else None
        if action == "caller" and row > 0:
            # The row above holds its caller's chain: the span over this one's first cell.
            found = next((s for s in rows[row - 1] if s.x0 <= span.x0 < s.x1), None)
            return (row - 1, found) if found is not None else None
        if action == "callee" and row + 1 < len(rows):
            below = [s for s in rows[row + 1] if span.x0 <= s.x0 < span.x1]
            return (row + 1, below[0]) if below else None  # the heaviest: drawn first
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A key that cannot move or zoom from here is not offered (nor listed in the help)."""
        if action in ("across", "caller", "callee"):
            step = parameters[0] if parameters and isinstance(parameters[0], int) else 0
            return self._step(action, step) is not None
        if action == "zoom_in":
            found = self.calls
            return (
                found is not None and self.node != self.roots[-1] and bool(found.total[self.node])
            )
        if action == "zoom_out":
            return len(self.roots) > 1
        return True

    def action_across(self, step: int) -> None:
        self._go(self._step("across", step))

    def action_caller(self) -> None:
        self._go(self._step("caller"))

    def action_callee(self) -> None:
        self._go(self._step("callee"))

    def _go(self, to: tuple[int, Span] | None) -> None:
        if to is not None:
            self._move_to(*to)

    def action_zoom_in(self) -> None:
        if self.node != self.roots[-1] and self.calls.total[self.node]:
            self.roots.append(self.node)
            self.row = 0
            self.refresh()
            self.post_message(self.FrameChosen(self.node))  # its share of the view changed

    def action_zoom_out(self) -> None:
        if len(self.roots) > 1:
            left = self.roots.pop()
            self.node = left
            self.row = 0
            rows = self.layout_rows()
            for r, spans in enumerate(rows):
                if any(s.node == left for s in spans):
                    self.row = r
            self.refresh()
            self.post_message(self.FrameChosen(self.node))

    def set_search(self, text: str) -> None:
        self.search = text
        self.refresh()

    def matches(self) -> int:
        """Frames shown whose name holds the search."""
        needle = self.search.casefold()
        if not needle:
            return 0
        return sum(self._holds(s, needle) for row in self.layout_rows() for s in row)

    def _holds(self, span: Span, needle: str) -> bool:
        """Whether the frame named in the span, or the last of its chain, holds the text."""
        names = {self.calls.label(span.shown), self.calls.label(span.node)}
        return any(needle in name.casefold() for name in names)

    def describe(self) -> str:
        """The frame under the cursor, for the pane's head."""
        node = self.node
        total = int(self.calls.total[node])
        root = int(self.calls.total[self.roots[-1]]) or 1
        name = printable(self.calls.label(node))
        return f"{name}: {format_duration(total)} ({total / root:.1%} of the view)"


_PYTHON_FRAME = re.compile(r"^.*\.py\(\d+\): (.+)$")


def short_name(label: str) -> str:
    """What a narrow cell shows of a name: a module's class, a Python frame's function (the
    head shows the whole name of the frame under the cursor)."""
    if label.startswith(MODULE):
        return label[len(MODULE) :]
    frame = _PYTHON_FRAME.match(label)
    return frame.group(1) if frame else label


def _fit(label: str, width: int) -> str:
    """The name in `width` cells and a space after it, so neighbours do not run together: cut
    with … when longer, padded when shorter; a one-cell frame is a bar."""
    if width <= 1:
        return "▏" if width == 1 else ""
    text = printable(label)
    room = width - 1
    if len(text) > room:
        text = text[: room - 1] + "…" if room > 1 else "…"
    return text.ljust(width)
