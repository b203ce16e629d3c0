"""What every pane of the trace screen's pane slot shares: what it opens on, and the messages
it posts (the screen holding it does the rest). A pane also has `opened(at) -> pane | str`
(a classmethod: the pane, or one line saying why it cannot open now) and `FOCUS`, the part that
takes the keys when it opens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget

from tui.model.analysis.diff import TraceDiff
from tui.model.trace import Trace


@dataclass(frozen=True)
class PaneContext:
    """What a pane opens on: the trace shown, where the timeline is, how the pane was last left
    (None: never opened), and for a pair what changed and which side is shown."""

    trace: Trace
    window: tuple[int, int]
    selected: int
    marked: tuple[int, int] | None
    last: object | None
    changes: TraceDiff | None = None
    side: int = 0


class SlicesChosen(Message):
    """A pane chose these slices: the timeline marks them (`mark`) and, with `jump`, goes to the
    longest; none and `said`: the line that says why."""

    def __init__(
        self, rows: npt.NDArray[np.int64], *, mark: bool, jump: bool, said: str | None = None
    ) -> None:
        super().__init__()
        self.rows, self.mark, self.jump, self.said = rows, mark, jump, said


class PaneDismissed(Message):
    """A pane asks to close (escape from its table, or q): its slot closes it and the details come
    back in its place, if it is still the pane there (keys typed fast may have opened another
    before this message is read)."""

    def __init__(self, pane: Widget) -> None:
        super().__init__()
        self.pane = pane


class Pane(Vertical):
    """A pane of the slot. Its `q` closes it, as on the help and health screens: only `q` on
    the timeline (or ctrl+c anywhere) quits, so leaving a pane never ends the session. (In a
    pane's filter or search box `q` types itself: the input takes it first.)"""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "close", "Close the pane", show=False)]

    def action_close(self) -> None:
        self.post_message(PaneDismissed(self))
