"""The format-neutral intermediate: what an importer gathers in one pass, before assembly.

An importer (one sub-package per input format) fills a `Collected` with columns of slices, B/E
and async pairs, instants, flow points, allocator records and counters, plus process and thread
metadata and the counts of what it skipped; `assemble` turns that into a `Trace`. Times here are
still the file's float microseconds; names, categories and lanes are interned.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec

from ..trace import ArgsReader
from .columns import Columns, Interner, LaneInterner

# Flow endpoint roles (bit flags); a `t` step ends one hop and starts the next.
FLOW_SRC, FLOW_DST = 1, 2
# Times are kept as int64 nanoseconds: timestamps further than this from zero (about 146 years
# in microseconds) cannot be, and are skipped as such.
TS_LIMIT_US = 4.6e15
OUT_OF_RANGE = "ts or dur beyond 146 years"
# progress(bytes_done, bytes_total, events_done); it may raise to stop the load.
Progress = Callable[[int, int, int], None]


class Collected(msgspec.Struct):
    """Everything one pass over the events gathers, before any sorting."""

    names: Interner = msgspec.field(default_factory=Interner)
    cats: Interner = msgspec.field(default_factory=Interner)
    lanes: LaneInterner = msgspec.field(default_factory=LaneInterner)
    flow_keys: Interner = msgspec.field(default_factory=Interner)
    # X: lane ts dur name cat event corr; B/E: lane ts name cat event begin
    slices: Columns = msgspec.field(default_factory=Columns)
    begin_end: Columns = msgspec.field(default_factory=Columns)
    # instants: lane (-1 unless thread-scoped) ts name cat event scope, and their pids
    instants: Columns = msgspec.field(default_factory=Columns)
    instant_pids: list[Any] = msgspec.field(default_factory=list)
    # flows s/t/f: lane ts key role cat event enclosing corr; v2 bind ids: X row key role
    flows: Columns = msgspec.field(default_factory=Columns)
    binds: Columns = msgspec.field(default_factory=Columns)
    # async b/e/S/F: lane ts key name cat event begin
    asyncs: Columns = msgspec.field(default_factory=Columns)
    # [memory] instants: lane ts bytes allocated reserved device_type device_id
    memory: Columns = msgspec.field(default_factory=Columns)
    counters: dict[tuple[Any, str], list[tuple[float, float]]] = msgspec.field(default_factory=dict)
    process_meta: dict[Any, dict[str, Any]] = msgspec.field(default_factory=dict)
    thread_meta: dict[tuple[Any, Any], dict[str, Any]] = msgspec.field(default_factory=dict)
    # Timestamps are kept relative to this whole microsecond (0 but for epoch-sized ones, which
    # a float64 cannot hold to the nanosecond).
    ts_base_us: int = 0
    by_phase: Counter[str] = msgspec.field(default_factory=Counter)
    skipped: Counter[str] = msgspec.field(default_factory=Counter)
    adjusted: Counter[str] = msgspec.field(default_factory=Counter)

    def rebase(self, base_us: int) -> None:
        """Keep timestamps relative to `base_us` from now on, shifting those already kept."""
        shift = base_us - self.ts_base_us
        for columns in (
            self.slices,
            self.begin_end,
            self.instants,
            self.flows,
            self.asyncs,
            self.memory,
        ):
            columns.parts["ts"] = [part - shift for part in columns.parts.get("ts", [])]
        for points in self.counters.values():
            points[:] = [(t - shift, v) for t, v in points]
        self.ts_base_us = base_us


class Imported(msgspec.Struct):
    """What an importer hands to `assemble`: the intermediate, how the file was written, the
    top level's other keys, and the reader that finds an event's args again."""

    collected: Collected
    form: str  # how the format calls this file's layout ("object", "array")
    truncated: bool
    meta: dict[str, Any]
    args: ArgsReader
