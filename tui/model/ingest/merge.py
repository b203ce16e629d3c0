"""Appending the intermediate of a later part of a file to that of the parts before it.

Each part was collected apart with its own string tables. Its ids are mapped onto the whole's in
bulk: its interned values, in their order of first appearance, are interned into the whole's
table (so a value first seen in this part gets the id one pass would have given it), and each id
column is indexed through that map. Event indices and slice rows move up by what came before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from .columns import Columns, Interner
from .intermediate import Collected

I64 = npt.NDArray[np.int64]
# Kineto's flow keys pack the category id above the flow id (collect.py); others are negative.
FLOW_ID_BITS = 40


def append_part(whole: Collected, part: Collected, events_before: int) -> None:
    """Add `part` (collected from the events after the `events_before` of `whole`)."""
    names = _map(whole.names, part.names)
    cats = _map(whole.cats, part.cats)
    lanes = _map(whole.lanes, part.lanes)
    keys = _map(whole.flow_keys, part.flow_keys)

    def event(c: I64) -> I64:
        return c + events_before

    def flow_key(c: I64) -> I64:
        packed = c >= 0
        return np.where(
            packed,
            (cats[np.where(packed, c >> FLOW_ID_BITS, 0)] << FLOW_ID_BITS)
            | (c & ((1 << FLOW_ID_BITS) - 1)),
            -1 - keys[np.where(packed, 0, -1 - c)],
        )

    rows_before = len(whole.slices)
    ids = {"lane": lanes.__getitem__, "name": names.__getitem__, "cat": cats.__getitem__}
    _extend(whole.slices, part.slices, {**ids, "event": event})
    _extend(whole.binds, part.binds, {"row": lambda c: c + rows_before, "key": keys.__getitem__})
    _extend(whole.begin_end, part.begin_end, {**ids, "event": event})
    _extend(
        whole.instants,
        part.instants,
        {**ids, "event": event, "lane": lambda c: np.where(c >= 0, lanes[c], -1)},
    )
    whole.instant_pids += part.instant_pids
    _extend(whole.flows, part.flows, {**ids, "event": event, "key": flow_key})
    _extend(whole.asyncs, part.asyncs, {**ids, "event": event, "key": keys.__getitem__})
    _extend(whole.memory, part.memory, {"lane": lanes.__getitem__})
    for series, points in part.counters.items():
        whole.counters.setdefault(series, []).extend(points)
    for meta, more in (
        (whole.process_meta, part.process_meta),
        (whole.thread_meta, part.thread_meta),
    ):
        for owner, values in more.items():
            meta.setdefault(owner, {}).update(values)
    whole.by_phase.update(part.by_phase)
    whole.skipped.update(part.skipped)
    whole.adjusted.update(part.adjusted)


def _map(whole: Interner, part: Interner) -> I64:
    """The whole's id of each of the part's ids."""
    if not part.values:
        return np.zeros(1, np.int64)  # indexable by an empty column's dtype
    return whole.many(part.values)


def _extend(whole: Columns, part: Columns, change: dict[str, Callable[[Any], Any]]) -> None:
    if not len(part):
        return
    columns = {}
    for name in part.parts:
        column = part.get(name, part.parts[name][0].dtype)
        columns[name] = change[name](column) if name in change else column
    whole.add(**columns)
