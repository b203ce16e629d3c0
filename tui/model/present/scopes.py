"""The scopes the stats pane cycles through with `v`, from the view and the selection."""

from __future__ import annotations

import msgspec

from ..analysis.scope import Scope
from ..analysis.steps import step_at
from ..timescale import format_duration
from ..trace import Trace

# The scopes `v` cycles through, in order.
SCOPE_NAMES = ("trace", "view", "range", "step", "subtree")


def next_scope(name: str) -> str:
    """The scope `v` goes to from `name`."""
    return SCOPE_NAMES[(SCOPE_NAMES.index(name) + 1) % len(SCOPE_NAMES)]


class NamedScope(msgspec.Struct, frozen=True):
    """A scope as the user picked it: which of SCOPE_NAMES applied, and a label to show."""

    name: str
    label: str
    scope: Scope


def scope_named(
    trace: Trace,
    name: str,
    window: tuple[int, int],
    selected: int,
    marked: tuple[int, int] | None = None,
) -> NamedScope:
    """One of SCOPE_NAMES for the view, the selected slice (-1: none) and the marked range.

    `range` is the marked range (`step` without one). `step` is the profiler step holding the
    selected slice (else the view's centre); without one it falls to `subtree`, and `subtree`
    without a selection to the whole trace.
    """
    s = trace.slices
    if name == "view":
        return NamedScope(name, name, Scope(*window))
    if name == "range":
        if marked is not None:
            a, b = marked
            return NamedScope(name, f"range {format_duration(b - a)}", Scope(a, b))
        name = "step"
    if name == "step":
        t = int(s.start[selected]) if selected >= 0 else sum(window) // 2
        step = step_at(trace, t)
        if step is not None:
            return NamedScope(name, f"step {step[0]}", Scope(step[1], step[2]))
        name = "subtree"
    if name == "subtree" and selected >= 0:
        return NamedScope(name, f"under {trace.slice_name(selected)}", Scope(root=selected))
    return NamedScope("trace", "trace", Scope())
