"""What every pane of the trace screen's pane slot shares: what it opens on, and the messages
it posts (the screen holding it does the rest). A pane also has `opened(at) -> pane | str`
(a classmethod: the pane, or one line saying why it cannot open now) and `FOCUS`, the part that
takes the keys when it opens."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from textual.binding import Binding, BindingType
from textual.containers import Vertical
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


class Pane(Vertical):
    """A pane of the slot. Its `q` closes it, as on the help and health screens: only `q` on
    the timeline (or ctrl+c anywhere) quits, so leaving a pane never ends the session. (In a
    pane's filter or search box `q` types itself: the input takes it first.)"""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "close", "Close the pane", show=False)]

    # Set by the slot holding the pane: closes it (its state kept) and gives the keys back.
    closer: Callable[[Pane], None] | None = None

    def action_close(self) -> None:
        self.dismiss()

    def dismiss(self) -> None:
        """Close, now: a message would be read after the keys typed next (a fast `t escape
        tab` would tab inside the pane about to close)."""
        if self.closer is not None:
            self.closer(self)
