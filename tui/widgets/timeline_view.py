"""What the canvas is told to show of the scene: the time window, the cursor and the marks.

A frozen value the Timeline hands to its LaneCanvas after every key; the canvas compares it
with the one it drew to know what to repaint (a new window or new matches: everything; a new
selection or cursor: the rows whose strips are keyed on them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, eq=False)
class View:
    """The visible time window (ns) and what is marked in it."""

    window: tuple[int, int]
    cursor: int = 0  # display row
    selected: int = -1  # slice row, -1 for none
    selected_gap: int = -1  # into the scene's idle gaps, -1 for none
    partners: tuple[int, ...] = ()  # what the selection's flows join it to
    partner_rows: frozenset[tuple[int, int]] = frozenset()  # (lane, level) holding partners
    match_mask: npt.NDArray[np.bool_] | None = None  # search matches by slice row

    def repaints_all(self, other: View) -> bool:
        """Whether going from `other` to this changes every row (the window or the matches)."""
        return self.window != other.window or self.match_mask is not other.match_mask
