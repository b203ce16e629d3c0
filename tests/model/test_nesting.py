"""The vectorised nesting agrees with the stack sweep wherever it applies."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.model.nesting import _nest_laminar, _nest_sweep, nest

intervals = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 25)), min_size=1, max_size=40)


def _sorted(pairs):
    start = np.asarray([p[0] for p in pairs], np.int64)
    dur = np.asarray([p[1] for p in pairs], np.int64)
    order = np.lexsort((-dur, start))
    return start[order], dur[order]


@settings(max_examples=400, deadline=None)
@given(intervals)
def test_vectorised_nesting_matches_the_sweep(pairs):
    start, dur = _sorted(pairs)
    fast, slow = _nest_laminar(start, dur), _nest_sweep(start, dur)
    if fast is not None:
        assert fast.depth.tolist() == slow.depth.tolist()
        assert fast.parent.tolist() == slow.parent.tolist()
        assert fast.rows == slow.rows
    result = nest(start, dur)
    # Whatever path: a child lies inside its parent, one row deeper; nothing is dropped.
    has = result.parent >= 0
    p = result.parent[has]
    assert (start[has] >= start[p]).all() and (start[has] + dur[has] <= start[p] + dur[p]).all()
    # One row deeper, except where one of the two was drawn on an extra row.
    in_tree = result.depth < result.levels
    both = in_tree[has] & in_tree[p]
    assert (result.depth[has][both] == result.depth[p][both] + 1).all()
    assert len(result.depth) == len(start) and (result.depth < result.rows).all()
    # Two slices of one row never hold one another: a row is sorted by start and by end.
    for d in range(result.rows):
        row = np.flatnonzero(result.depth == d)
        ends = start[row] + dur[row]
        assert (np.diff(ends) >= 0).all()


def test_nested_and_overlapping_lanes():
    start, dur = _sorted([(0, 100), (0, 40), (50, 0), (50, 0), (90, 30), (100, 10)])
    assert _nest_laminar(start, dur) is None  # (90, 30) outlives its parent
    laminar = _nest_laminar(*_sorted([(0, 100), (0, 40), (10, 5), (50, 0), (50, 0)]))
    assert laminar is not None and laminar.depth.tolist() == [0, 1, 2, 1, 1]
