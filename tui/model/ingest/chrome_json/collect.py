"""Sorting decoded Chrome events by phase into the intermediate: the one pass over every event.

Complete slices (`X`) and flow events are most of any real trace, so they are taken a whole chunk
at a time with list comprehensions and numpy; the rarer phases go through a per-event loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..columns import Rows, lane_ident
from ..intermediate import FLOW_DST, FLOW_SRC, OUT_OF_RANGE, TS_LIMIT_US, Collected
from ..lanes import ASYNC_TID
from ..source import Buffer
from .args import chunk_args, decode_args
from .events import Chunk, Event
from .exact_ts import EXACT_LIMIT_US, exact_relative_ts

_FLOW_ROLES = {"s": FLOW_SRC, "f": FLOW_DST, "t": FLOW_SRC | FLOW_DST}
_SCOPES = {"g": 0, "p": 1, "t": 2}
THREAD_SCOPE = 2
_ID_BITS = 40
MEMORY_EVENT = "[memory]"


def collect_chunk(out: Collected, chunk: Chunk, buf: Buffer) -> None:
    """Add one decoded chunk's events to `out`."""
    events = chunk.events
    ts = np.asarray([e.ts for e in events], np.float64)  # None becomes NaN
    _exact_times(out, chunk, buf, ts)
    phases = [e.ph for e in events]
    out.by_phase.update(phases)
    ph = np.asarray(phases) if phases else np.zeros(0, "U1")
    is_x = ph == "X"
    is_flow = (ph == "s") | (ph == "f") | (ph == "t")
    x_rows = np.flatnonzero(is_x)
    if len(x_rows):
        _complete_slices(
            out, [events[i] for i in x_rows.tolist()], ts[x_rows], x_rows + chunk.first
        )
    flow_rows = np.flatnonzero(is_flow)
    if len(flow_rows):
        _flows(out, [events[i] for i in flow_rows.tolist()], ts[flow_rows], flow_rows + chunk.first)
    rest = np.flatnonzero(~(is_x | is_flow)).tolist()
    if rest:
        _other_phases(out, chunk, buf, rest)


def _exact_times(out: Collected, chunk: Chunk, buf: Buffer, ts: npt.NDArray[np.float64]) -> None:
    """Epoch-sized timestamps, read again exactly and made relative to the trace's base (in the
    events and in `ts`, the chunk's times)."""
    with np.errstate(invalid="ignore"):
        big = np.abs(ts) > EXACT_LIMIT_US
    if not big.any() and out.ts_base_us == 0:
        return
    if out.ts_base_us == 0:
        in_range = big & (np.abs(ts) <= TS_LIMIT_US)
        if not in_range.any():
            return  # only times beyond the range: skipped as such
        out.rebase(int(np.floor(ts[in_range][0])))
    exact = exact_relative_ts(buf, chunk, out.ts_base_us, ts)
    with np.errstate(invalid="ignore"):
        keep = np.abs(ts) <= TS_LIMIT_US  # those beyond stay as they are, to be skipped
    ts[keep] = exact[keep]
    for k in np.flatnonzero(keep).tolist():
        chunk.events[k].ts = float(exact[k])


def _complete_slices(
    out: Collected, xs: list[Event], ts: npt.NDArray[np.float64], index: npt.NDArray[np.int64]
) -> None:
    dur = np.asarray([e.dur for e in xs], np.float64)
    keep = ~np.isnan(ts)
    if not keep.all():
        out.skipped["missing or non-numeric ts"] += int((~keep).sum())
    no_dur = keep & np.isnan(dur)
    if no_dur.any():
        out.adjusted["X without dur, drawn with zero length"] += int(no_dur.sum())
        dur[no_dur] = 0.0
    negative = keep & (dur < 0)
    if negative.any():
        out.skipped["negative dur"] += int(negative.sum())
        keep &= ~negative
    far = keep & ((np.abs(ts) > TS_LIMIT_US) | (dur > TS_LIMIT_US))
    if far.any():
        out.skipped[OUT_OF_RANGE] += int(far.sum())
        keep &= ~far
    if not keep.all():
        rows = np.flatnonzero(keep)
        xs = [xs[i] for i in rows.tolist()]
        ts, dur, index = ts[keep], dur[keep], index[keep]
    # One pass each, an id that is not an integer read as -1 on the way.
    corr = [c if (a := e.args) is not None and type(c := a.correlation) is int else -1 for e in xs]
    ext = [c if (a := e.args) is not None and type(c := a.external) is int else -1 for e in xs]
    first_row = len(out.slices)
    out.slices.add(
        lane=out.lanes.many([(e.pid, e.tid) for e in xs]),
        ts=ts,
        dur=dur,
        name=out.names.many([e.name for e in xs]),
        cat=out.cats.many([e.cat for e in xs]),
        event=index,
        corr=_ints(corr),
        ext=_ints(ext),
    )
    binds = [
        (k, e) for k, e in enumerate(xs) if e.bind_id is not None and (e.flow_in or e.flow_out)
    ]
    if binds:
        out.binds.add(
            row=[first_row + k for k, _ in binds],
            key=[out.flow_keys(("bind", e.bind_id)) for _, e in binds],
            role=[FLOW_DST * e.flow_in + FLOW_SRC * e.flow_out for _, e in binds],
        )


def _ints(values: list[int]) -> npt.NDArray[np.int64]:
    try:
        return np.asarray(values, np.int64)
    except OverflowError:  # a correlation id beyond int64 links nothing
        return np.asarray([v if -1 <= v < 2**63 else -1 for v in values], np.int64)


def _flows(
    out: Collected, fs: list[Event], ts: npt.NDArray[np.float64], index: npt.NDArray[np.int64]
) -> None:
    ids = [e.id for e in fs]
    with np.errstate(invalid="ignore"):
        keep = np.abs(ts) <= TS_LIMIT_US  # NaN (no ts) is not
    if None in ids:
        keep &= np.asarray([i is not None for i in ids])
    if not keep.all():
        out.skipped["flow event without a usable ts or id"] += int((~keep).sum())
        rows = np.flatnonzero(keep).tolist()
        fs, ids = [fs[k] for k in rows], [ids[k] for k in rows]
        ts, index = ts[keep], index[keep]
    cats = out.cats.many([e.cat for e in fs])
    key, corr = _flow_keys(out, fs, ids, cats)
    out.flows.add(
        lane=out.lanes.many([(e.pid, e.tid) for e in fs]),
        ts=ts,
        key=key,
        role=[_FLOW_ROLES[e.ph] for e in fs],
        cat=cats,
        event=index,
        enclosing=[e.bp == "e" or e.ph != "f" for e in fs],
        corr=corr,
    )


def _flow_keys(
    out: Collected, fs: list[Event], ids: list[Any], cats: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The flows' keys, and their ids as correlation ids (-1 where not an integer): Kineto's
    launch flows carry the launch's correlation id as their id.

    Chrome keys v1 flows by category and id. Kineto's ids are small integers: those pack into
    one int64 without a dict lookup each; other ids are interned, and kept apart as negative
    keys."""
    if all(type(i) is int and 0 <= i < 1 << _ID_BITS for i in ids):
        corr = np.asarray(ids, np.int64)
        return (cats << _ID_BITS) | corr, corr
    keys = -1 - out.flow_keys.many([(e.cat, e.id) for e in fs])
    return keys, _ints([i if type(i) is int else -1 for i in ids])


def _other_phases(out: Collected, chunk: Chunk, buf: Buffer, rows: list[int]) -> None:
    counter_rows: list[int] = []
    memory_rows: list[int] = []
    begin_end, instants, asyncs = Rows(out.begin_end), Rows(out.instants), Rows(out.asyncs)
    for k in rows:
        e = chunk.events[k]
        ph = e.ph
        index = chunk.first + k
        if ph == "M":
            _metadata(out, e)
        elif e.ts is None:
            out.skipped["missing or non-numeric ts" if ph else "missing or non-string ph"] += 1
        elif abs(e.ts) > TS_LIMIT_US:
            out.skipped[OUT_OF_RANGE] += 1
        elif ph == "B" or ph == "E":
            begin_end.append(
                lane=out.lanes((e.pid, e.tid)),
                ts=e.ts,
                name=out.names(e.name),
                cat=out.cats(e.cat),
                event=index,
                begin=ph == "B",
            )
        elif ph == "i" or ph == "I" or ph == "n":
            _instant(out, instants, e, e.ts, index)
            if e.name == MEMORY_EVENT:
                memory_rows.append(k)
        elif ph == "C":
            counter_rows.append(k)
        elif ph in ("b", "e", "S", "F"):
            _async(out, asyncs, e, e.ts, index)
        elif ph == "":
            out.skipped["missing or non-string ph"] += 1
        else:
            out.skipped[f"unsupported phase {ph!r}"] += 1
    for done in (begin_end, instants, asyncs):
        done.flush()
    if memory_rows:
        _memory(out, chunk, memory_rows)
    if counter_rows:  # any args keys: read from the text (Kineto writes few counters)
        _counters(out, chunk, chunk_args(buf, chunk), counter_rows)


def _instant(out: Collected, rows: Rows, e: Event, ts: float, index: int) -> None:
    """Thread-scoped instants get a lane; process- and global-scoped ones must not create one."""
    scope = _SCOPES.get(e.s or "t", THREAD_SCOPE)
    if e.ph == "n":  # a nestable async instant sits on its process's async row
        lane = out.lanes((e.pid, ASYNC_TID))
        scope = THREAD_SCOPE
    elif scope == THREAD_SCOPE:
        lane = out.lanes((e.pid, e.tid))
    else:
        lane = -1
    rows.append(
        lane=lane, ts=ts, name=out.names(e.name), cat=out.cats(e.cat), event=index, scope=scope
    )
    out.instant_pids.append(lane_ident(e.pid) if scope != 0 else None)


def _async(out: Collected, rows: Rows, e: Event, ts: float, index: int) -> None:
    ident = e.id if e.id is not None else (str(e.id2) if e.id2 is not None else None)
    if ident is None:
        out.skipped["async event without id"] += 1
        return
    pid = lane_ident(e.pid)
    rows.append(
        lane=out.lanes((pid, ASYNC_TID)),
        ts=ts,
        key=out.flow_keys(("async", pid, e.cat, ident)),
        name=out.names(e.name),
        cat=out.cats(e.cat),
        event=index,
        begin=e.ph in ("b", "S"),
    )


def _metadata(out: Collected, e: Event) -> None:
    args = e.args
    pid = lane_ident(e.pid)
    if e.name in ("process_name", "process_labels", "process_sort_index"):
        meta = out.process_meta.setdefault(pid, {})
    elif e.name in ("thread_name", "thread_sort_index"):
        meta = out.thread_meta.setdefault((pid, lane_ident(e.tid)), {})
    else:
        return
    if args is None:
        return
    if e.name.endswith("_sort_index"):
        if type(args.sort_index) is int or type(args.sort_index) is float:
            meta["sort_index"] = args.sort_index
    elif e.name == "process_labels":
        if args.labels is not None:
            meta["labels"] = str(args.labels)
    elif args.name is not None:
        meta["name"] = str(args.name)


def _args_dict(raws: list[bytes | None] | None, k: int) -> dict[str, Any] | None:
    raw = raws[k] if raws is not None and k < len(raws) else None
    try:
        values = decode_args(raw) if raw is not None else None
    except (ValueError, RecursionError):  # invalid UTF-8, nesting beyond the stdlib's
        return None
    return values if isinstance(values, dict) else None


def _memory(out: Collected, chunk: Chunk, rows: list[int]) -> None:
    """Kineto's allocator records: bytes (negative when freed) and the totals after it."""
    cols = Rows(out.memory)
    for k in rows:
        e = chunk.events[k]
        a = e.args
        numbers = (
            [a.bytes, a.total_allocated, a.total_reserved, a.device_type, a.device_id]
            if a is not None
            else [None]
        )
        if not all(_int64(v) for v in numbers):
            out.skipped["[memory] with no byte counts"] += 1
            continue
        size, allocated, reserved, device_type, device_id = numbers
        cols.append(
            lane=out.lanes((e.pid, e.tid)),
            ts=e.ts,
            bytes=size,
            allocated=allocated,
            reserved=reserved,
            device_type=device_type,
            device_id=device_id,
        )
    cols.flush()


def _counters(
    out: Collected, chunk: Chunk, raws: list[bytes | None] | None, rows: list[int]
) -> None:
    """One series per counter name (and id) and args key."""
    for k in rows:
        e = chunk.events[k]
        values = _args_dict(raws, k)
        if values is None:
            out.skipped["counter without args"] += 1
            continue
        pid = lane_ident(e.pid)
        base = e.name if e.id is None else f"{e.name} {e.id}"
        for key, value in values.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                # Kineto's PM-sampling counters write one value under an empty key.
                series = out.counters.setdefault((pid, f"{base}.{key}" if key else base), [])
                series.append((float(e.ts or 0.0), float(value)))


def _int64(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63
