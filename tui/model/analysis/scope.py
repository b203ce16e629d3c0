"""Scopes of the stats: the whole trace, a time window, or the subtree of one slice."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..trace import Trace
from .steps import step_at

# The scopes `v` cycles through, in order.
SCOPE_NAMES = ("trace", "view", "step", "subtree")


@dataclass(frozen=True)
class Scope:
    """Which ops count: those starting in [t0, t1), and only under `root` when it is set."""

    t0: int | None = None
    t1: int | None = None
    root: int = -1  # a slice row: its subtree

    def rows(self, trace: Trace) -> npt.NDArray[np.bool_]:
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


@dataclass(frozen=True)
class NamedScope:
    """A scope as the user picked it: which of SCOPE_NAMES applied, and a label to show."""

    name: str
    label: str
    scope: Scope


def scope_named(trace: Trace, name: str, window: tuple[int, int], selected: int) -> NamedScope:
    """One of SCOPE_NAMES for the view and the selected slice (-1: none).

    `step` is the profiler step holding the selected slice (else the view's centre); without
    one it falls to `subtree`, and `subtree` without a selection to the whole trace.
    """
    s = trace.slices
    if name == "view":
        return NamedScope(name, name, Scope(*window))
    if name == "step":
        t = int(s.start[selected]) if selected >= 0 else sum(window) // 2
        step = step_at(trace, t)
        if step is not None:
            return NamedScope(name, f"step {step[0]}", Scope(step[1], step[2]))
        name = "subtree"
    if name == "subtree" and selected >= 0:
        return NamedScope(name, f"under {trace.slice_name(selected)}", Scope(root=selected))
    return NamedScope("trace", "trace", Scope())
