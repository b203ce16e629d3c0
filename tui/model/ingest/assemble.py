"""Assembly: the intermediate an importer filled, sorted, nested and linked into a `Trace`."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from functools import partial
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..nesting import nest
from ..patterns import is_device_category
from ..trace import (
    CounterSeries,
    Format,
    Instants,
    Lane,
    MemoryEvents,
    Process,
    Slices,
    Trace,
)
from .intermediate import Collected, Imported
from .lanes import ASYNC_TID, LaneKey, lane_name, lane_order, process_name, process_order
from .links import build_links, external_links
from .pairs import match_pairs

I64 = npt.NDArray[np.int64]
T = TypeVar("T")
SWITCH_INTERVAL_S = 0.0002
_SLICE_COLUMNS = ("start", "dur", "lane", "name", "cat", "event", "corr", "ext")


def assemble(path: str, fmt: Format, imported: Imported, threads: bool = False) -> Trace:
    """Sort, nest and link the intermediate into a `Trace` (times become int64 ns).

    Args:
        threads: whether a second core may be used (the load was given more than one).
    """
    out, meta = imported.collected, imported.meta
    origin = _origin(out)
    x = out.slices
    cols: dict[str, I64] = {
        "start": _ns(x.get("ts", np.float64), origin),
        "dur": _ns_dur(x.get("dur", np.float64)),
        **{k: x.get(k, np.int64) for k in ("lane", "name", "cat", "event", "corr", "ext")},
    }
    x.parts.clear()  # the columns above are all that is needed of them: free the rest now
    n_x = len(cols["start"])
    span = _span(out, origin, cols)
    for more in (
        _pairs(out.begin_end, "lane", ("B", "E"), out, origin, span),
        _pairs(out.asyncs, "key", ("async begin", "async end"), out, origin, span),
    ):
        for k in _SLICE_COLUMNS:
            cols[k] = np.concatenate((cols[k], more[k]))
    if len(cols["start"]):
        span = max(span, int((cols["start"] + cols["dur"]).max()))

    keys, lane_rank, processes = _place_lanes(out, cols["lane"], cols["cat"])
    order = np.lexsort((cols["event"], -cols["dur"], cols["start"], lane_rank[cols["lane"]]))
    sorted_row = np.empty_like(order)
    sorted_row[order] = np.arange(len(order))
    for k in _SLICE_COLUMNS:  # one column at a time, so that only one extra copy exists
        cols[k] = cols[k][order]
    del order
    # Names and categories are kept as int32 only: the int64 copies go now, not at the end.
    name, cat = (cols.pop(k).astype(np.int32) for k in ("name", "cat"))
    start, dur, lane, event, corr, ext = (
        cols.pop(k) for k in ("start", "dur", "lane", "event", "corr", "ext")
    )

    counts = np.bincount(lane_rank[lane], minlength=len(keys)).astype(np.int64)
    hi_by_rank = np.cumsum(counts)
    lo_by_rank = hi_by_rank - counts
    depth = np.zeros(len(start), np.int16)
    parent = np.full(len(start), -1, np.int32)
    slices = Slices(start, dur, depth, parent, name, cat, event)
    is_gpu_lane = np.asarray([k.kind == "gpu" for k in keys] + [False])
    # Only the rare flow point that the last slice to start before it does not hold needs the
    # nesting: with cores to spare, the lanes are nested in a thread while the flows are linked
    # (numpy lets go of the GIL in its loops), and linking waits for it only for such a point.
    with ThreadPoolExecutor(1) if threads else nullcontext() as pool, _short_switches(threads):
        nest_all = partial(_nest_lanes, start, dur, lo_by_rank, hi_by_rank, depth, parent)
        nested = pool.submit(nest_all).result if pool is not None else _done(nest_all())
        flow_ts = _ns(out.flows.get("ts", np.float64), origin)
        launches, flows = build_links(
            out,
            slices,
            lane,
            lo_by_rank[lane_rank],
            hi_by_rank[lane_rank],
            corr,
            sorted_row[:n_x],
            flow_ts,
            is_gpu_lane,
            nested,
        )
        shapes = nested()
    # The flows' columns and the links' inputs are done with: freed before the External id
    # join, the load's peak (about 15 MB a million events).
    out.flows.parts.clear()
    del flow_ts, sorted_row
    external = external_links(out, slices, lane, ext, is_gpu_lane, launches)
    del corr, ext
    lanes, process_list = _build_lanes(
        out, keys, lane_rank, processes, lo_by_rank, hi_by_rank, shapes
    )
    process_of_lane = np.asarray([processes[k.pid] for k in keys], np.int64)
    memory = _memory(out, origin, lane_rank)
    devices = meta.get("deviceProperties") or meta.get("computeProperties") or []
    unit = meta.get("displayTimeUnit")
    return Trace(
        path=path,
        format=fmt,
        names=[str(v) for v in out.names.values],
        categories=[str(v) for v in out.cats.values],
        processes=process_list,
        lanes=lanes,
        slices=slices,
        launches=launches,
        external=external,
        flows=flows,
        instants=_instants(out, origin, lane_rank, process_of_lane, processes),
        memory=memory,
        counters=_counters(out, origin, processes),
        origin_us=origin + out.ts_base_us,
        span_ns=span,
        base_time_ns=_base_time(meta.get("baseTimeNanoseconds"), origin + out.ts_base_us),
        display_time_unit=unit if isinstance(unit, str) else None,
        devices=[d for d in devices if isinstance(d, dict)] if isinstance(devices, list) else [],
        metadata=meta,
        events_by_phase=out.by_phase,
        skipped=out.skipped,
        adjusted=out.adjusted,
        args_reader=imported.args,
    )


def _nest_lanes(
    start: I64,
    dur: I64,
    lo_by_rank: I64,
    hi_by_rank: I64,
    depth: npt.NDArray[np.int16],
    parent: npt.NDArray[np.int32],
) -> list[tuple[int, int]]:
    """Fill in the depth and parent (global rows) of every slice; (levels, rows) per lane."""
    shapes: list[tuple[int, int]] = []
    for a, b in zip(lo_by_rank.tolist(), hi_by_rank.tolist(), strict=True):
        nesting = nest(start[a:b], dur[a:b])
        depth[a:b] = nesting.depth
        parent[a:b] = np.where(nesting.parent >= 0, nesting.parent + a, -1)
        shapes.append((nesting.levels, nesting.rows))
    return shapes


@contextmanager
def _short_switches(threads: bool) -> Iterator[None]:
    """While the sweep's Python loop runs beside the linking, hand the GIL over more often than
    every 5 ms: the linking is numpy calls of a few ms each, and each would otherwise wait out a
    whole interval for the GIL (measured at 5M events: assembly 1.2-1.6 s, 0.93-0.97 s with it)."""
    if not threads:
        yield
        return
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _done(value: T) -> Callable[[], T]:
    """A result already at hand, fetched as a future's is."""
    return lambda: value


def _origin(out: Collected) -> float:
    """The whole microsecond at or before the earliest timestamp: t=0 of the model."""
    lows = [
        float(c.get("ts", np.float64).min())
        for c in (out.slices, out.begin_end, out.instants, out.flows, out.asyncs)
        if len(c)
    ]
    lows += [min(t for t, _ in v) for v in out.counters.values()]
    return float(math.floor(min(lows))) if lows else 0.0


def _ns(ts_us: npt.ArrayLike, origin: float) -> I64:
    # Subtracting the origin first keeps float µs exact to the nanosecond for epoch-sized values.
    return np.rint((np.asarray(ts_us, np.float64) - origin) * 1000.0).astype(np.int64)


def _ns_dur(dur_us: npt.NDArray[np.float64]) -> I64:
    return np.rint(dur_us * 1000.0).astype(np.int64)


def _span(out: Collected, origin: float, cols: dict[str, I64]) -> int:
    ends = [int((cols["start"] + cols["dur"]).max())] if len(cols["start"]) else [0]
    for c in (out.begin_end, out.instants, out.flows, out.asyncs):
        if len(c):
            ends.append(int(_ns(c.get("ts", np.float64), origin).max()))
    return max(ends)


def _base_time(base: Any, origin: float) -> int | None:
    """Absolute ns of t=0: from baseTimeNanoseconds, or from timestamps that are epoch µs."""
    whole_us = int(origin)  # the origin is a whole microsecond: exact in integers
    if isinstance(base, int) and not isinstance(base, bool):
        return base + whole_us * 1000
    if origin > 1e15:  # epoch microseconds, after 2001
        return whole_us * 1000
    return None


def _pairs(
    c: Any, group_column: str, words: tuple[str, str], out: Collected, origin: float, span: int
) -> dict[str, I64]:
    ts = _ns(c.get("ts", np.float64), origin)
    event = c.get("event", np.int64)
    begin_pos, end_ts = match_pairs(
        c.get(group_column, np.int64),
        ts,
        event,
        c.get("begin", bool),
        span,
        words,
        out.skipped,
        out.adjusted,
    )
    start = ts[begin_pos]
    return {
        "start": start,
        "dur": np.maximum(end_ts - start, 0),
        "lane": c.get("lane", np.int64)[begin_pos],
        "name": c.get("name", np.int64)[begin_pos],
        "cat": c.get("cat", np.int64)[begin_pos],
        "event": event[begin_pos],
        "corr": np.full(len(begin_pos), -1, np.int64),
        "ext": np.full(len(begin_pos), -1, np.int64),
    }


def _place_lanes(out: Collected, lane: I64, cat: I64) -> tuple[list[LaneKey], I64, dict[Any, int]]:
    """Classify every lane by what its slices are, and rank lanes in display order."""
    device_cat = np.asarray([is_device_category(str(c)) for c in out.cats.values] + [False])
    has_device = np.zeros(len(out.lanes.values), bool)
    has_device[lane[device_cat[cat]]] = True
    keys = [
        LaneKey(pid, tid, "async" if tid == ASYNC_TID else ("gpu" if has_device[i] else "cpu"))
        for i, (pid, tid) in enumerate(out.lanes.values)
    ]
    device_pids = {k.pid for k in keys if k.kind == "gpu"}
    ordered = sorted(
        {k.pid for k in keys},
        key=lambda p: process_order(p, p in device_pids, out.process_meta.get(p, {})),
    )
    processes = {pid: i for i, pid in enumerate(ordered)}
    ranked = sorted(
        range(len(keys)),
        key=lambda i: (
            processes[keys[i].pid],
            lane_order(keys[i], out.thread_meta.get((keys[i].pid, keys[i].tid), {})),
        ),
    )
    lane_rank = np.empty(len(keys), np.int64)
    lane_rank[ranked] = np.arange(len(keys))
    return keys, lane_rank, processes


def _build_lanes(
    out: Collected,
    keys: list[LaneKey],
    lane_rank: I64,
    processes: dict[Any, int],
    lo: I64,
    hi: I64,
    shapes: list[tuple[int, int]],
) -> tuple[list[Lane], list[Process]]:
    lanes = []
    for rank, i in enumerate(np.argsort(lane_rank).tolist()):
        k = keys[i]
        meta = out.thread_meta.get((k.pid, k.tid), {})
        lanes.append(
            Lane(
                rank,
                processes[k.pid],
                k.pid,
                k.tid,
                lane_name(k, meta),
                k.kind,
                int(lo[rank]),
                int(hi[rank]),
                *shapes[rank],
            )
        )
    process_list = []
    for pid, index in processes.items():
        members = tuple(lane.index for lane in lanes if lane.process == index)
        is_device = any(lanes[m].kind == "gpu" for m in members)
        name = process_name(pid, is_device, out.process_meta.get(pid, {}))
        process_list.append(Process(index, pid, name, is_device, members))
    return lanes, process_list


def _instants(
    out: Collected, origin: float, lane_rank: I64, process_of_lane: I64, processes: dict[Any, int]
) -> Instants:
    """Thread-scoped instants sit on their lane; process-scoped on the process; global on none."""
    c = out.instants
    lane_ids = c.get("lane", np.int64)
    on_lane = lane_ids >= 0
    lane = np.full(len(lane_ids), -1, np.int64)
    lane[on_lane] = lane_rank[lane_ids[on_lane]]
    process = np.asarray([processes.get(pid, -1) for pid in out.instant_pids], np.int64)
    process[on_lane] = process_of_lane[lane_ids[on_lane]]
    return Instants(
        ts=_ns(c.get("ts", np.float64), origin),
        lane=lane.astype(np.int32),
        process=process.astype(np.int32),
        name=c.get("name", np.int32),
        event=c.get("event", np.int64),
    )


def _memory(out: Collected, origin: float, lane_rank: I64) -> MemoryEvents:
    m = out.memory
    ts = _ns(m.get("ts", np.float64), origin)
    order = np.argsort(ts, kind="stable")
    lane = m.get("lane", np.int64)
    return MemoryEvents(
        ts=ts[order],
        lane=(lane_rank[lane] if len(lane) else lane)[order].astype(np.int32),
        bytes=m.get("bytes", np.int64)[order],
        allocated=m.get("allocated", np.int64)[order],
        reserved=m.get("reserved", np.int64)[order],
        device_type=m.get("device_type", np.int16)[order],
        device_id=m.get("device_id", np.int16)[order],
    )


def _counters(out: Collected, origin: float, processes: dict[Any, int]) -> list[CounterSeries]:
    series = []
    for (pid, name), points in out.counters.items():
        points.sort()
        series.append(
            CounterSeries(
                processes.get(pid, -1),
                name,
                _ns([t for t, _ in points], origin),
                np.asarray([v for _, v in points], np.float64),
            )
        )
    return series
