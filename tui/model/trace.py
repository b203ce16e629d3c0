"""The loaded trace: columnar slices grouped into lanes, links, instants, counters."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Literal, Protocol, TypeVar, cast

import msgspec
import numpy as np

from tui.model.arrays import F64, I16, I32, I64, Bool

T = TypeVar("T")
# What a lane holds: a host thread, a device stream, or async spans (Chrome b/e, S/F events).
LaneKind = Literal["cpu", "gpu", "async"]


class Slices(msgspec.Struct, frozen=True, dict=True):
    """Every slice of the trace, sorted by lane, then start, then longest first.

    Slice i of lane L is row `L.lo + k`; `event` points back into the file for lazy args.
    """

    start: I64  # ns from the trace start
    dur: I64  # ns
    depth: I16  # row inside its lane: the depth in torch's tree (see nesting.py)
    parent: I32  # enclosing slice, or -1
    name: I32  # into Trace.names
    cat: I32  # into Trace.categories
    event: I64  # index of the event in the file's event array

    def __len__(self) -> int:
        return len(self.start)

    @cached_property
    def end(self) -> I64:
        """start + dur, computed once (many analyses read it over every slice)."""
        return self.start + self.dur


class Lane(msgspec.Struct, frozen=True):
    """One row group: a CPU thread, a GPU stream, or a process's async events."""

    index: int
    process: int  # into Trace.processes
    pid: int | str
    tid: int | str
    name: str
    kind: LaneKind
    lo: int  # its slices are Trace.slices rows [lo, hi)
    hi: int
    levels: int  # nesting levels (1 when nothing nests, 0 when empty)
    rows: int  # levels plus the extra rows of slices that a slice of their row holds

    @property
    def slice_count(self) -> int:
        return self.hi - self.lo


class Process(msgspec.Struct, frozen=True):
    """A process (or a device) and the lanes under it, in display order."""

    index: int
    pid: int | str
    name: str
    is_device: bool
    lanes: tuple[int, ...]


class Links(msgspec.Struct, frozen=True):
    """Pairs of slices: a CPU launch and the GPU work it started, or any other flow."""

    src: I32
    dst: I32
    cat: I32  # into Trace.categories

    def __len__(self) -> int:
        return len(self.src)


class Instants(msgspec.Struct, frozen=True):
    """Instant events; `lane` is -1 for process- and global-scoped ones."""

    ts: I64
    lane: I32
    process: I32  # -1 for global scope
    name: I32
    event: I64


class MemoryEvents(msgspec.Struct, frozen=True):
    """Allocator records ([memory] instants), by time: bytes are negative when freed."""

    ts: I64
    lane: I32  # the thread that allocated
    bytes: I64
    allocated: I64  # Total Allocated on that device after the event
    reserved: I64
    device_type: I16  # 0 CPU, 1 CUDA (c10::DeviceType)
    device_id: I16

    def __len__(self) -> int:
        return len(self.ts)


class CounterSeries(msgspec.Struct, frozen=True):
    """One counter series: a `C` event's name and one of its args keys, over time."""

    process: int
    name: str
    ts: I64
    values: F64


class ArgsReader(Protocol):
    """Finds one event's args again, decoded when they are shown (the importer owns it).

    The model cache keeps `arrays()` under the reader's `name`; the importer of that name makes
    the reader again from them.
    """

    name: ClassVar[str]

    def args(self, event: int) -> Any:
        """The decoded args of event `event` (its index in the file), None when it has none."""
        ...

    def arrays(self) -> dict[str, I64]:
        """What the model cache keeps of this reader."""
        ...

    def shapes(self, events: I64) -> list[dict[str, Any] | None]:
        """`Input Dims`, `Input type` and `Concrete Inputs` of many events at once (what the
        performance model reads), faster than `args` one event at a time."""
        ...

    def open(self) -> None:
        """Make lookups ready (open the file again after a cache hit); called off the UI."""
        ...

    def nbytes(self) -> int:
        """Bytes of the tables it holds."""
        ...


class Format(msgspec.Struct, frozen=True):
    """How the file was written."""

    form: str  # "object" or "array"
    gzip: bool
    truncated: bool
    chosen_from: str | None  # the folder the file was picked from


@dataclass
class Trace:
    """A loaded trace. Times are int64 ns relative to `origin_us` (the earliest timestamp).

    `counters` are the file's own counter series (allocator series are derived from `memory`).
    """

    path: str
    format: Format
    names: list[str]
    categories: list[str]
    processes: list[Process]
    lanes: list[Lane]
    slices: Slices
    launches: Links
    external: Links  # op -> GPU work it owns by `External id` (torch's join), see links.py
    flows: Links
    instants: Instants
    memory: MemoryEvents
    counters: list[CounterSeries]
    origin_us: float
    span_ns: int
    base_time_ns: int | None  # absolute time of t=0, when the trace says
    display_time_unit: str | None
    devices: list[dict[str, Any]]
    metadata: dict[str, Any]
    events_by_phase: Counter[str]
    skipped: Counter[str]
    adjusted: Counter[str]
    args_reader: ArgsReader = field(repr=False)
    # Derived data computed once on first use (op tree, GPU attribution, gaps), by name.
    derived: dict[str, Any] = field(default_factory=dict, repr=False)
    # One lock per slot being derived: the viewer's threads (the header's health and next step,
    # the stats pane's first tables) and its main thread ask for the same slots, and a slot
    # asked for while another thread derives it is waited for, not derived twice (the step
    # verdicts of a 5M-event trace: seconds).
    _deriving: dict[str, threading.Lock] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def derive(self, key: str, compute: Callable[[], T]) -> T:
        """Data derived from the trace (op tree, attribution, gaps...), computed on first use."""
        if key not in self.derived:
            with self._deriving.setdefault(key, threading.Lock()):
                if key not in self.derived:
                    self.derived[key] = compute()
            # Derived: later askers read the slot without the lock (one a window or a scope
            # would otherwise stay for the trace's life).
            self._deriving.pop(key, None)
        return cast(T, self.derived[key])

    def name_test(self, test: Callable[[str], object], among: I32 | None = None) -> Bool:
        """`test` of every name, as a table indexed by name id: `table[slices.name]` is a mask
        of slices (its last entry, False, is id -1: no name).

        `among`: the name ids of the slices the table will be read for; only those names are
        tested, the rest are False: a kernel-name test then reads the few kernel names, not every
        op's (a pattern takes microseconds on a long C++ kernel name).
        """
        if among is None:
            return np.asarray([bool(test(n)) for n in self.names] + [False], dtype=bool)
        table = np.zeros(len(self.names) + 1, dtype=bool)
        ids = np.unique(among)
        ids = ids[ids >= 0]
        table[ids] = [bool(test(self.names[i])) for i in ids.tolist()]
        return table

    def rows_named(self, test: Callable[[str], object], lo: int = 0, hi: int | None = None) -> I64:
        """The slices (of rows lo..hi) whose name passes `test`, in row order."""
        names = self.slices.name[lo:hi]
        return (np.flatnonzero(self.name_test(test)[names]) + lo).astype(np.int64)

    def category_test(self, test: Callable[[str], object]) -> Bool:
        """`test` of every category, as a table indexed by category id (-1: False)."""
        return np.asarray([bool(test(c)) for c in self.categories] + [False], dtype=bool)

    def kind_mask(self, kind: LaneKind) -> Bool:
        """Which slice rows lie on lanes of `kind` ("cpu", "gpu" or "async")."""
        mask = np.zeros(len(self.slices), bool)
        for lane in self.lanes:
            if lane.kind == kind:
                mask[lane.lo : lane.hi] = True
        return mask

    def lane_of(self, row: int) -> Lane:
        """The lane holding slice `row`."""
        return self.lanes[int(self.lane_indices(np.asarray([row]))[0])]

    def lane_indices(self, rows: I64) -> I64:
        """The index in `lanes` of the lane holding each slice of `rows`."""
        los = self.derive("lane_starts", lambda: np.asarray([lane.lo for lane in self.lanes]))
        return np.searchsorted(los, rows, side="right") - 1

    def slice_name(self, row: int) -> str:
        return self.names[int(self.slices.name[row])]

    def args_of_event(self, event: int) -> Any:
        """The decoded args of event `event` (decoded now, not at load)."""
        return self.args_reader.args(event)

    def args(self, row: int) -> Any:
        """The args of slice `row`."""
        return self.args_of_event(int(self.slices.event[row]))

    def nbytes(self) -> int:
        """Bytes held by the columnar model and the args reader's tables (not the interned
        strings or the file buffer)."""
        arrays: list[Any] = [
            getattr(group, name)
            for group in (
                self.slices,
                self.launches,
                self.external,
                self.flows,
                self.instants,
                self.memory,
            )
            for name in group.__struct_fields__
        ]
        total = sum(int(a.nbytes) for a in arrays) + self.args_reader.nbytes()
        return total + sum(int(c.ts.nbytes + c.values.nbytes) for c in self.counters)
