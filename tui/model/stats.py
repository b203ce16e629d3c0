"""Per-op statistics like torch's `key_averages()`: calls, self and total CPU time."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .patterns import HOST_OP_CATEGORIES, PROFILER_STEP, PROFILER_STEP_ROW
from .trace import Trace


@dataclass(frozen=True)
class OpStat:
    """One row of the table: an op name and its totals (ns)."""

    name: str
    calls: int
    self_cpu_ns: int
    cpu_total_ns: int

    @property
    def cpu_avg_ns(self) -> float:
        return self.cpu_total_ns / self.calls if self.calls else 0.0


def op_stats(trace: Trace, window: tuple[int, int] | None = None) -> list[OpStat]:
    """Ops on CPU lanes aggregated by name, most CPU time first.

    Ops are the slices key_averages() counts (CPU ops, annotations, runtime calls); a trace from
    another tool, with none of those categories, has every CPU-lane slice counted. Self time is a
    slice's duration less that of the ops directly inside it (slices that are not ops, such as
    Python frames, are looked through). `ProfilerStep#N` rows fold into `ProfilerStep*`, as in
    torch's table.

    Args:
        window: only ops that start in [t0, t1) ns, when given.
    """
    s = trace.slices
    cpu_row = np.zeros(len(s), bool)
    for lane in trace.lanes:
        if lane.kind == "cpu":
            cpu_row[lane.lo : lane.hi] = True
    op_cat = np.asarray([c.lower() in HOST_OP_CATEGORIES for c in trace.categories] + [False])
    is_op = cpu_row & op_cat[s.cat]
    if not is_op.any():
        is_op = cpu_row
    # The nearest enclosing op of every slice, looking through non-op slices.
    up = s.parent.astype(np.int64)
    climb = np.flatnonzero((up >= 0) & ~is_op[np.maximum(up, 0)])
    while len(climb):
        up[climb] = s.parent[up[climb]]
        climb = climb[(up[climb] >= 0) & ~is_op[np.maximum(up[climb], 0)]]
    is_op = _drop_wrappers(is_op, up, s.name)
    inside = np.zeros(len(s), np.int64)
    child = np.flatnonzero(is_op & (up >= 0))
    np.add.at(inside, up[child], s.dur[child])
    rows = is_op
    if window is not None:
        rows = rows & (s.start >= window[0]) & (s.start < window[1])
    picked = np.flatnonzero(rows)
    groups = _name_groups(trace)
    group = groups[s.name[picked]]
    n = int(groups.max()) + 1 if len(groups) else 0
    calls = np.bincount(group, minlength=n)
    total = np.bincount(group, weights=s.dur[picked], minlength=n)
    self_time = np.bincount(group, weights=(s.dur - inside)[picked], minlength=n)
    labels = _group_labels(trace, groups)
    stats = [
        OpStat(labels[g], int(calls[g]), round(float(self_time[g])), round(float(total[g])))
        for g in np.flatnonzero(calls).tolist()
    ]
    stats.sort(key=lambda o: (-o.cpu_total_ns, o.name))
    return stats


def _drop_wrappers(is_op: np.ndarray, up: np.ndarray, name: np.ndarray) -> np.ndarray:
    """Fold an op into its parent when it is the parent's only child and has its name.

    torch does this in key_averages() (EventList._remove_dup_nodes): an overload calling itself
    counts once. Children of a folded op move up to the parent (`up` is updated in place).
    """
    is_op = is_op.copy()
    while True:
        has_up = is_op & (up >= 0)
        children = np.bincount(up[has_up], minlength=len(up))
        rows = np.flatnonzero(has_up)
        dup = rows[(name[up[rows]] == name[rows]) & (children[up[rows]] == 1)]
        if len(dup) == 0:
            return is_op
        is_op[dup] = False
        folded = np.zeros(len(up), bool)
        folded[dup] = True
        moved = np.flatnonzero(is_op & (up >= 0) & folded[np.maximum(up, 0)])
        up[moved] = up[up[moved]]


def _name_groups(trace: Trace) -> np.ndarray:
    """Name id -> row id: names are their own rows except the ProfilerStep#N family."""
    ids = np.arange(len(trace.names), dtype=np.int64)
    steps = [i for i, name in enumerate(trace.names) if PROFILER_STEP.match(name)]
    if steps:
        ids[steps] = steps[0]
    return ids


def _group_labels(trace: Trace, groups: np.ndarray) -> dict[int, str]:
    labels = {int(g): trace.names[int(g)] for g in np.unique(groups)}
    for g in labels:
        if PROFILER_STEP.match(labels[g]):
            labels[g] = PROFILER_STEP_ROW
    return labels
