"""What every pane of the trace screen's pane slot shares: what it opens on, and the messages
it posts (the screen holding it does the rest). A pane also has `opened(at) -> pane | str`
(a classmethod: the pane, or one line saying why it cannot open now) and `FOCUS`, the part that
takes the keys when it opens."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from textual.message import Message

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
    """A pane asks to close (escape from its table): its slot closes it and the details come
    back in its place."""
