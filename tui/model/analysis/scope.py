"""Scopes of the stats: the whole trace, a time window, or the subtree of one slice."""

from __future__ import annotations

import msgspec
import numpy as np

from tui.model.arrays import Bool

from ..trace import Trace


class Scope(msgspec.Struct, frozen=True):
    """Which ops count: those starting in [t0, t1), and only under `root` when it is set."""

    t0: int | None = None
    t1: int | None = None
    root: int = -1  # a slice row: its subtree

    def window(self, trace: Trace) -> tuple[int, int] | None:
        """The time the scope covers: its window, or its root's span (None: the whole trace)."""
        if self.t0 is not None and self.t1 is not None:
            return self.t0, self.t1
        if self.root >= 0:
            s = trace.slices
            return int(s.start[self.root]), int(s.start[self.root] + s.dur[self.root])
        return None

    def rows(self, trace: Trace) -> Bool:
        s = trace.slices
        mask = np.ones(len(s), bool)
        if self.t0 is not None:
            mask &= s.start >= self.t0
        if self.t1 is not None:
            mask &= s.start < self.t1
        if self.root >= 0:
            lane = trace.lane_of(self.root)
            inside = np.zeros(len(s), bool)
            inside[lane.lo : lane.hi] = True
            start, end = int(s.start[self.root]), int(s.start[self.root] + s.dur[self.root])
            inside &= (s.start >= start) & (s.start + s.dur <= end)
            inside &= s.depth >= s.depth[self.root]
            mask &= inside
        return mask
