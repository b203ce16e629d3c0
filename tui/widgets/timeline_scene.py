"""The timeline's scene: what a trace's lanes look like now, shared by the Timeline (which
reshapes it on keys) and the LaneCanvas (which draws it).

Each lane's shape, the pinned lanes, the display rows they make, and the per-trace things a
row is painted from (slice kinds, bar labels, counters, idle gaps). No Textual here: the scene
changes only when a lane is reshaped or pinned, and `generation` says so to the canvas.
"""

from __future__ import annotations

import numpy as np

from tui.model.analysis.gaps import Gaps, idle_gaps, largest_first
from tui.model.analysis.memory import counter_series
from tui.model.present.kinds import KINDS, slice_kinds
from tui.model.present.names import shown_names
from tui.model.present.rows import COLLAPSED, FOLDED, FULL, DisplayRow, LaneRows, layout
from tui.model.text import shown
from tui.model.trace import Trace

LABEL_LIMIT = 300  # a bar never needs more of a name than a terminal is wide
PINNED_SHARE = 0.5  # pinned lanes take at most this share of the rows by default
WORK_KINDS = ("kernel", "memcpy", "memset", "comm")


class Scene:
    """A trace's lanes in their current shapes, as display rows (pinned ones first)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.lanes = LaneRows(trace)
        self.kinds = slice_kinds(trace)
        self.labels = self._labels()
        self.counters = counter_series(trace)
        self.gaps: Gaps = idle_gaps(trace)
        self.gap_order = largest_first(self.gaps)
        self.pinned: tuple[int, ...] = tuple(
            lane.index for lane in trace.lanes if lane.kind == "gpu" and lane.slice_count
        )
        self.grouped: tuple[int, ...] = ()  # default pins that did not fit, drawn as one row
        self.rows: list[DisplayRow] = []
        self.pinned_rows = 0
        self.row_of: dict[tuple[int, int], int] = {}
        self.generation = 0  # bumped by every relayout: strips drawn before are stale
        self._before_collapse: dict[int, str] = {}  # lane: its shape before it was collapsed
        self._gap_level: dict[int, int] = {}
        self._work_kinds = [KINDS.index(k) for k in WORK_KINDS]
        self.relayout()

    def _labels(self) -> list[str]:
        return [shown(n, LABEL_LIMIT) for n in shown_names(self.trace).all()]

    def relabel(self) -> None:
        """The bars' names again, as shown now (C++ names demangled, or as recorded)."""
        self.labels = self._labels()
        self.generation += 1

    def relayout(self) -> None:
        """The display rows again, after a lane's shape or the pins changed."""
        self.grouped = tuple(g for g in self.grouped if g not in self.pinned)
        self.rows = layout(self.trace, self.lanes, self.pinned, self.grouped)
        self.pinned_rows = sum(1 for r in self.rows if r.pinned)
        self.row_of = {(r.lane, r.level): i for i, r in enumerate(self.rows) if r.lane >= 0}
        self._gap_level.clear()
        self.generation += 1

    def fit_pins(self, view_height: int) -> None:
        """Keep the default pins to a share of the rows: fold pinned streams into one row
        each, then draw the last ones together in one row, until they fit. Done once; the user
        decides after."""
        budget = max(1, min(int(view_height * PINNED_SHARE), view_height - 1))
        if self.pinned_rows > budget:
            for lane in self.pinned:
                if self.lanes.count(lane) > 1:
                    self.lanes.modes[lane] = COLLAPSED
        pins = list(self.pinned)
        rest: list[int] = []
        while len(pins) > 1 and sum(self.lanes.count(p) for p in pins) + bool(rest) > budget:
            rest.insert(0, pins.pop())
        self.pinned, self.grouped = tuple(pins), tuple(rest)
        self.relayout()

    def first_row(self) -> int:
        """Where the cursor starts: the thread launching the most GPU work, else the first
        lane under the pinned ones, else the first lane."""
        src = self.trace.launches.src
        if len(src):
            los = np.asarray([lane.lo for lane in self.trace.lanes])
            launcher = int(np.bincount(np.searchsorted(los, src, side="right") - 1).argmax())
            if (launcher, 0) in self.row_of:
                return self.row_of[(launcher, 0)]
        lanes = [i for i, r in enumerate(self.rows) if r.lane >= 0]
        return next((i for i in lanes if not self.rows[i].pinned), lanes[0] if lanes else 0)

    def holds(self, row: DisplayRow, slice_row: int) -> bool:
        """Whether display row `row` draws slice `slice_row`."""
        if slice_row < 0 or row.lane < 0:
            return False
        lane = self.trace.lanes[row.lane]
        return lane.lo <= slice_row < lane.hi and self.lanes.level_of(slice_row) == row.level

    def row_index(self, slice_row: int) -> int:
        """The display row drawing a slice (which must be drawn)."""
        lane = self.trace.lane_of(slice_row).index
        return self.row_of[(lane, self.lanes.level_of(slice_row))]

    def show_row_of(self, slice_row: int) -> None:
        """Make the slice's row drawn: expand its lane where its shape hides it."""
        lane = self.trace.lane_of(slice_row).index
        if self.lanes.level_of(slice_row) < 0:
            mode = self.lanes.mode(lane)
            self.lanes.modes[lane] = FOLDED if mode == COLLAPSED else FULL
            if self.lanes.level_of(slice_row) < 0:
                self.lanes.modes[lane] = FULL
            self.relayout()

    def expanded_mode(self, lane: int) -> str:
        """The shape a collapsed lane opens to: the one it had, else its default."""
        mode = self._before_collapse.pop(lane, self.lanes.default_mode(lane))
        return FULL if mode == COLLAPSED else mode

    def expand(self, lane: int, slice_row: int) -> None:
        """Open a collapsed lane to the shape it had, or in full where that hides the slice."""
        self.lanes.modes[lane] = self.expanded_mode(lane)
        self.relayout()
        if self.lanes.level_of(slice_row) < 0:
            self.lanes.modes[lane] = FULL
            self.relayout()

    def toggle_collapsed(self, lane: int) -> None:
        """`c`: collapse a lane into one row, or open it again to the shape it had."""
        if self.lanes.mode(lane) == COLLAPSED:
            self.lanes.modes[lane] = self.expanded_mode(lane)
        else:
            self._before_collapse[lane] = self.lanes.mode(lane)
            self.lanes.modes[lane] = COLLAPSED

    def toggle_pinned(self, lane: int) -> str:
        """`p`: pin a lane on top (in the trace's lane order), or put it back; says which."""
        name = self.trace.lanes[lane].name
        if lane in self.pinned:
            self.pinned = tuple(p for p in self.pinned if p != lane)
            process = self.trace.processes[self.trace.lanes[lane].process].name
            return f"{name} unpinned: back in its place under {process}"
        self.pinned = tuple(sorted((*self.pinned, lane)))
        return f"{name} pinned on top"

    def is_gpu(self, lane: int) -> bool:
        return self.trace.lanes[lane].kind == "gpu"

    def gap_row(self, lane: int) -> int:
        """The one row of a lane that idle gaps are drawn on: the one holding the most GPU
        work (-1 when none does: a CPU lane)."""
        found = self._gap_level.get(lane)
        if found is None and not self.is_gpu(lane):
            found = self._gap_level[lane] = -1  # CPU ops named like NCCL are no stream
        if found is None:
            counts = [
                int(np.isin(self.kinds[self.lanes.get(lane, level).rows], self._work_kinds).sum())
                for level in range(self.lanes.count(lane))
            ]
            best = int(np.argmax(counts)) if counts else 0
            found = self._gap_level[lane] = best if counts and counts[best] else -1
        return found
