"""The timeline's selection: a slice or an idle gap, the slices its flows join it to (marked
as partners, and the rows that hold them), and a selection a lane's shape hid for a while."""

from __future__ import annotations

from dataclasses import dataclass, field

from tui.model.present import navigate as nav
from tui.model.present.raster import slice_at
from tui.widgets.timeline_scene import Scene


@dataclass
class Selection:
    """What is selected; the Timeline changes it, the canvas draws a View of it."""

    slice: int = -1  # slice row, -1 for none
    gap: int = -1  # idle gap, -1 for none
    partners: list[int] = field(default_factory=list)
    partner_rows: set[tuple[int, int]] = field(default_factory=set)
    remembered: int = -1  # a selection hidden by a lane's shape, given back once drawn again

    def clear(self) -> None:
        """Nothing selected (a hidden selection is still remembered)."""
        self.slice, self.gap, self.partners = -1, -1, []
        self.partner_rows = set()

    def take_slice(self, scene: Scene, slice_row: int) -> None:
        """Select a slice (-1 for none) and mark its flow partners. Its row must be drawn."""
        self.slice, self.remembered, self.gap = slice_row, -1, -1
        self.partners = partners_of(scene, slice_row)
        self.mark_partner_rows(scene)

    def take_gap(self, gap: int) -> None:
        self.clear()
        self.gap = gap

    def reshaped(self, scene: Scene) -> None:
        """A lane's shape or pin changed: give back a remembered selection drawn again, or
        where the selection is hidden now, remember it and select what is drawn over it (the
        collapsed stretch, the innermost frame)."""
        if self.remembered >= 0 and scene.lanes.level_of(self.remembered) >= 0:
            self.slice, self.remembered = self.remembered, -1
        elif self.slice >= 0 and scene.lanes.level_of(self.slice) < 0:
            self.remembered = self.slice
            self.slice = drawn_over(scene, self.slice)
        self.partners = partners_of(scene, self.slice)
        self.mark_partner_rows(scene)

    def mark_partner_rows(self, scene: Scene) -> None:
        rows = set()
        for p in self.partners:
            level = scene.lanes.level_of(p)
            if level >= 0:
                rows.add((scene.trace.lane_of(p).index, level))
        self.partner_rows = rows


def partners_of(scene: Scene, slice_row: int) -> list[int]:
    """The slices a slice's flows lead to, then those leading to it ([] for none)."""
    if slice_row < 0:
        return []
    return nav.linked_forward(scene.trace, slice_row) + nav.linked_back(scene.trace, slice_row)


def drawn_over(scene: Scene, hidden: int) -> int:
    """The deepest slice drawn at a hidden slice's start in its lane, -1 for none."""
    lane = scene.trace.lane_of(hidden).index
    t = int(scene.trace.slices.start[hidden])
    for level in reversed(range(scene.lanes.count(lane))):
        found = slice_at(scene.lanes.get(lane, level), t)
        if found >= 0:
            return found
    return -1
