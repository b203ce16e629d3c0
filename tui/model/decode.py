"""Decoding a Chrome trace's event array into typed records, one byte range at a time.

The event array is cut at event boundaries into chunks of a few MB and each chunk is decoded by
msgspec into `Event` structs that hold only the fields the model needs (fast, and no dict per
event). A chunk whose events have unexpected types is decoded again leniently, event by event; a
chunk with broken JSON is split around the damage, so one bad event costs one event, and a file
cut off by a crashed writer keeps every complete event.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from .errors import TraceError
from .source import UTF8_BOM, Buffer, not_json_reason

CHUNK_BYTES = 4 << 20
# Between two events: the end of one object, a comma, the start of the next. A split chosen here
# can only land inside a string or a nested array, and then the chunk fails as truncated.
_SEPARATOR = re.compile(rb"\}\s*,\s*\{")
_ERROR_BYTE = re.compile(r"\(byte (\d+)\)")
_TOO_DEEP = "nested too deeply to decode"
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_WHITESPACE = b" \t\r\n"
# Top-level values bigger than this are not kept (viztracer embeds whole source files).
_MAX_META_BYTES = 1 << 20


class Args(msgspec.Struct, gc=False):
    """The few args the loader needs; the rest are decoded lazily when a slice is shown."""

    correlation: Any = None
    name: Any = None
    labels: Any = None
    sort_index: Any = None


class Event(msgspec.Struct, gc=False):
    """One trace event, reduced to the fields the model uses."""

    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float | None = None
    dur: float | None = None
    id: int | str | None = None
    id2: Any = None
    bp: str | None = None
    s: str | None = None
    bind_id: int | str | None = None
    flow_in: bool = False
    flow_out: bool = False
    args: Args | None = None


_NULL = msgspec.Raw(b"null")


class _RawArgs(msgspec.Struct, gc=False):
    # Raw cannot be in a union with None: an absent args reads as the JSON text `null`.
    args: msgspec.Raw = msgspec.Raw(b"null")


@dataclass
class Chunk:
    """Events decoded from buf[start:end]; event i of the chunk has index `first + i`."""

    start: int
    end: int
    first: int
    events: list[Event]
    lenient: bool


@dataclass
class Layout:
    """Where the events are in the file, and what else the top level says."""

    form: str  # "object" or "array"
    start: int  # first byte inside the event array
    end: int  # the closing "]", or the end of the data when it is missing
    closed: bool
    meta: dict[str, Any] = field(default_factory=dict)
    open_end: bool = False  # object form: where the array closes is found while decoding


def locate_events(buf: Buffer, name: str) -> Layout:
    """Find the event array of an object-form or array-form trace."""
    first = _first_byte(buf)
    if first is None:
        raise TraceError(name, "file is empty or only whitespace")
    lead = buf[first : first + 1]
    if lead == b"[":
        end = _closing_bracket(buf)
        return Layout("array", first + 1, end if end is not None else len(buf), end is not None)
    if lead != b"{":
        raise TraceError(name, not_json_reason(bytes(buf[first : first + 64])))
    quick = _locate_by_key(buf, strict=True)
    if quick is not None:
        return quick
    try:
        top = msgspec.json.decode(buf, type=dict[str, msgspec.Raw])
    except msgspec.ValidationError:
        raise TraceError(name, "not a trace: the JSON object has non-string keys") from None
    except msgspec.DecodeError:
        broken = _locate_by_key(buf, strict=False)
        if broken is None:
            raise TraceError(name, "not valid JSON and no traceEvents array found") from None
        return broken
    raw = top.get("traceEvents")
    if raw is None:
        raise TraceError(name, _not_a_trace_reason(top))
    offset = _offset_in(buf, raw)
    if bytes(memoryview(raw)[:1]) != b"[":
        raise TraceError(name, "not a trace: traceEvents is not a list")
    end = offset + len(raw) - 1
    return Layout("object", offset + 1, end, True, _small_meta(top))


def decode_chunks(
    buf: Buffer,
    layout: Layout,
    skipped: Counter[str],
    readable: Callable[[], int] | None = None,
) -> Iterator[Chunk]:
    """Decode the event array chunk by chunk; damage is skipped and counted in `skipped`.

    Sets `layout.meta["_truncated"]` when the array stops without its closing bracket.

    Args:
        readable: how many bytes of `buf` may be read now (a file truncated by another program
            while it is mapped); decoding stops there.
    """
    view = memoryview(buf)
    end = layout.end if layout.closed else _strip_tail(buf, layout.start, layout.end)
    a = _skip_ws(buf, layout.start, end)
    first = 0
    state = _TailState(closed=layout.closed, end=end)
    while a < end:
        if readable is not None and readable() < end:
            end = state.end = readable()
            layout.meta["_shrank"] = True
            if a >= end:
                break
        b = _boundary_after(buf, a + CHUNK_BYTES, end)
        result = _try_decode(view, a, b)
        while isinstance(result, _Failure) and result.at_end and b < end:
            b = _boundary_after(buf, b + 1, end)  # the cut fell inside a value: widen
            result = _try_decode(view, a, b)
        if isinstance(result, _Failure) and result.closed_at >= 0 and layout.open_end:
            closer = a + result.closed_at
            tail = _tail_keys(buf, closer)
            if tail is not None:  # the object really goes on after the array: it ended here
                layout.end, layout.closed = closer, True
                layout.meta.update(tail)
                end = state.end = _strip_tail(buf, a, closer)
                b = end
                result = _try_decode(view, a, b) if a < b else ([], False)
        if isinstance(result, _Failure):
            # Damage: re-cut at a boundary found by a careful scan, then go event by event.
            b = _item_end_after(buf, a, b, end)
            chunks = list(_salvage(view, buf, a, b, first, skipped, state))
        else:
            chunks = [Chunk(a, b, first, *result)] if result[0] else []
        for chunk in chunks:
            yield chunk
            first += len(chunk.events)
        a = _after_comma(buf, b, end)
    layout.meta["_truncated"] = state.truncated or not layout.closed


def chunk_args(buf: Buffer, chunk: Chunk) -> list[bytes | None] | None:
    """The undecoded args of every event of a chunk, or None when it cannot be read again."""
    return _args_in(buf, chunk.start, chunk.end)


def raw_args(buf: Buffer, chunk_start: int, chunk_end: int, index: int) -> bytes | None:
    """The undecoded args of event `index` of the chunk at buf[chunk_start:chunk_end]."""
    raws = _args_in(buf, chunk_start, chunk_end)
    return raws[index] if raws is not None and index < len(raws) else None


def _args_in(buf: Buffer, start: int, end: int) -> list[bytes | None] | None:
    payload = b"".join((b"[", memoryview(buf)[start:end], b"]"))
    try:
        items = msgspec.json.decode(payload, type=list[_RawArgs])
        return [None if item.args == _NULL else bytes(item.args) for item in items]
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        values = _loads_stdlib(payload)
        if values is None:
            return None
        return [
            json.dumps(v["args"]).encode() if isinstance(v, dict) and "args" in v else None
            for v in values
        ]


def decode_args(raw: bytes) -> Any:
    """Decode one event's args exactly: the stdlib keeps integers above 2^64 (orjson makes them
    floats) and reads NaN literals. Args are decoded one event at a time, so speed is no issue."""
    return json.loads(raw)


@dataclass
class _Failure:
    at_end: bool  # the chunk ended inside a value: widening it may fix it
    closed_at: int = -1  # the event array closed inside the chunk, at this text offset
    reason: str = "malformed JSON"


def _try_decode(view: memoryview, a: int, b: int) -> tuple[list[Event], bool] | _Failure:
    """Decode buf[a:b] as events: typed and fast, else leniently, else say where it broke."""
    payload = b"".join((b"[", view[a:b], b"]"))
    try:
        return msgspec.json.decode(payload, type=list[Event]), False
    except msgspec.ValidationError:
        pass
    except msgspec.DecodeError as e:
        return _lenient(payload, e)
    except RecursionError:
        return _Failure(False, reason=_TOO_DEEP)
    try:
        items = msgspec.json.decode(payload)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        return _lenient(payload, e)
    except RecursionError:
        return _Failure(False, reason=_TOO_DEEP)
    return [to_event(item) for item in items], True


def _lenient(payload: bytes, error: Exception) -> tuple[list[Event], bool] | _Failure:
    """Read what msgspec refuses (NaN, Infinity, 1e400) with the stdlib.

    A chunk that was cut inside a value fails at its end: that is reported, not read.
    """
    match = _ERROR_BYTE.search(str(error))
    if match is not None and "trailing characters" in str(error):
        # The array's own ']' came before the chunk's end: the events stop there.
        close = payload.rfind(b"]", 0, int(match.group(1)))
        return _Failure(False, close - 1)
    if str(error).startswith("Input data was truncated") or (
        match is not None and int(match.group(1)) >= len(payload) - 1
    ):
        return _Failure(True)
    try:
        items = json.loads(payload)
    except (ValueError, RecursionError):
        return _Failure(False)
    return [to_event(item) for item in items], True


@dataclass
class _TailState:
    closed: bool
    end: int
    truncated: bool = False


def _salvage(
    view: memoryview,
    buf: Buffer,
    a: int,
    b: int,
    first: int,
    skipped: Counter[str],
    state: _TailState,
) -> Iterator[Chunk]:
    """Decode a damaged range event by event, skipping and counting the events that fail.

    Only damaged ranges come here, so a careful scan (strings and nesting tracked) replaces the
    quick separator search that a string holding "}, {" can fool.
    """
    items = _split_items(buf, a, b)
    run: list[Event] = []
    run_start = run_end = a
    lenient = False
    for k, (start, end) in enumerate(items):
        result = _try_decode(view, start, end)
        if not isinstance(result, _Failure) and len(result[0]) == 1:
            if not run:
                run_start = start
            run += result[0]
            run_end, lenient = end, lenient or result[1]
            continue
        if run:
            yield Chunk(run_start, run_end, first, run, lenient)
            first += len(run)
            run, lenient = [], False
        if k == len(items) - 1 and end == state.end and not state.closed:
            skipped["incomplete last event"] += 1
            state.truncated = True
        elif bytes(buf[start:end]).strip(_WHITESPACE):
            skipped[result.reason if isinstance(result, _Failure) else "malformed JSON"] += 1
    if run:
        yield Chunk(run_start, run_end, first, run, lenient)


_TOKEN = re.compile(rb'[{}\[\],"]')
_STRING_TAIL = re.compile(rb'(?:[^"\\]|\\.)*"', re.DOTALL)


def _split_items(buf: Buffer, a: int, b: int) -> list[tuple[int, int]]:
    """The byte ranges of the comma-separated items of array text buf[a:b]."""
    items = []
    start = a
    for comma, after in _item_commas(buf, a, b):
        items.append((start, comma))
        start = after
    items.append((start, b))
    return items


def _item_end_after(buf: Buffer, a: int, target: int, end: int) -> int:
    """The end of the first item, counted from `a`, that ends at or after `target`."""
    for comma, _ in _item_commas(buf, a, end):
        if comma >= target:
            return comma
    return end


def _item_commas(buf: Buffer, a: int, b: int) -> Iterator[tuple[int, int]]:
    """The commas between items of array text buf[a:b], tracking strings and nesting."""
    depth = 0
    pos = a
    while (match := _TOKEN.search(buf, pos, b)) is not None:
        token = match.group()
        pos = match.end()
        if token == b'"':
            tail = _STRING_TAIL.match(buf, pos, b)
            if tail is None:
                break  # an unterminated string runs to the end: one broken item
            pos = tail.end()
        elif token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth = max(depth - 1, 0)
        elif depth == 0:  # a comma between items
            yield match.start(), pos


def _strip_tail(buf: Buffer, start: int, end: int) -> int:
    """An unclosed array's end, less the trailing whitespace and comma a dead writer left."""
    while end > start and buf[end - 1] in _WHITESPACE + b",":
        end -= 1
    return end


def _loads_stdlib(payload: bytes) -> list[Any] | None:
    """Any JSON array the stdlib can read (exact big integers, NaN), or None."""
    try:
        items = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    return items if isinstance(items, list) else None


def to_event(item: Any) -> Event:
    """Build an Event from one leniently decoded JSON value, coercing what can be coerced.

    Values that cannot be used become None or "" so that the model's checks skip the event with
    a reason (an event without a usable `ph` is skipped as such).
    """
    if not isinstance(item, dict):
        return Event(ph="")
    get = item.get
    args = get("args")
    ph = get("ph")
    return Event(
        ph=ph if isinstance(ph, str) else "",
        name=_text(get("name")),
        cat=_text(get("cat")),
        pid=_ident(get("pid")),
        tid=_ident(get("tid")),
        ts=_number(get("ts")),
        dur=_number(get("dur")),
        id=_ident_or_none(get("id")),
        id2=get("id2"),
        bp=get("bp") if isinstance(get("bp"), str) else None,
        s=get("s") if isinstance(get("s"), str) else None,
        bind_id=_ident_or_none(get("bind_id")),
        flow_in=get("flow_in") is True,
        flow_out=get("flow_out") is True,
        args=Args(
            correlation=args.get("correlation"),
            name=args.get("name"),
            labels=args.get("labels"),
            sort_index=args.get("sort_index"),
        )
        if isinstance(args, dict)
        else None,
    )


def _text(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, default=str)


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        f = float(v)
    elif isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            return None
    else:
        return None
    return f if np.isfinite(f) else None


def _ident(v: Any) -> int | str:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        return v
    return 0 if v is None else json.dumps(v, default=str)


def _ident_or_none(v: Any) -> int | str | None:
    return None if v is None else _ident(v)


def _offset_in(buf: Buffer, raw: msgspec.Raw) -> int:
    """Where the zero-copy `raw` sits inside `buf`."""
    base = np.frombuffer(buf, np.uint8).ctypes.data
    inner = np.frombuffer(raw, np.uint8).ctypes.data
    return int(inner - base)


def _locate_by_key(buf: Buffer, strict: bool) -> Layout | None:
    """Find traceEvents by its key, without parsing the whole file.

    Parsing the whole object first would bring every page of a multi-GB file into memory at
    once; the array's end is found while decoding instead (see decode_chunks). With `strict`,
    None unless what precedes the key reads as the start of the top-level object (then the
    caller parses the whole object); without it (a broken file), the key is taken as found.
    """
    match = _EVENTS_KEY.search(buf)
    if match is None:
        return None
    head = bytes(buf[: match.start()]).rstrip(_WHITESPACE).rstrip(b",")
    meta: dict[str, Any] = {}
    try:
        meta = _small_meta(msgspec.json.decode(head + b"}", type=dict[str, msgspec.Raw]))
    except (msgspec.DecodeError, msgspec.ValidationError):
        if strict:
            return None  # the key sits inside another value
    return Layout("object", match.end(), len(buf), False, meta, open_end=True)


def _tail_keys(buf: Buffer, pos: int) -> dict[str, Any] | None:
    """The keys after a ']' at `pos` if the text after it ends the top-level object."""
    after = _skip_ws(buf, pos + 1, len(buf))
    if after >= len(buf) or buf[after] not in b",}":
        return None
    rest = bytes(buf[after:]).rstrip(_WHITESPACE)
    if rest == b"}":
        return {}
    if not rest.startswith(b","):
        return None
    try:
        top = msgspec.json.decode(b"{" + rest[1:], type=dict[str, msgspec.Raw])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return _small_meta(top)


def _small_meta(top: dict[str, msgspec.Raw]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key, raw in top.items():
        if key == "traceEvents" or len(raw) > _MAX_META_BYTES:
            continue
        try:
            meta[key] = decode_args(bytes(raw))
        except (ValueError, RecursionError):
            continue
    return meta


def _not_a_trace_reason(top: dict[str, msgspec.Raw]) -> str:
    keys = sorted(top)
    if {"nodes", "schema"} <= set(keys):
        return "not a trace: this is a PyTorch Execution Trace (a graph of nodes), not a profile"
    shown = ", ".join(keys[:6]) + (", ..." if len(keys) > 6 else "")
    return f"not a trace: the JSON object has no traceEvents list (keys: {shown or 'none'})"


def _first_byte(buf: Buffer) -> int | None:
    """Where the JSON text starts, past a UTF-8 byte order mark and whitespace."""
    i = _skip_ws(buf, 3 if bytes(buf[:3]) == UTF8_BOM else 0, len(buf))
    return i if i < len(buf) else None


def _skip_ws(buf: Buffer, i: int, end: int) -> int:
    while i < end and buf[i] in _WHITESPACE:
        i += 1
    return i


def _closing_bracket(buf: Buffer) -> int | None:
    """Index of an array-form trace's closing ']' when the data ends with it."""
    i = len(buf) - 1
    while i >= 0 and buf[i] in _WHITESPACE:
        i -= 1
    return i if i >= 0 and buf[i] == ord("]") else None


def _boundary_after(buf: Buffer, pos: int, end: int) -> int:
    """The end (just past the '}') of the first event that ends after `pos`, or `end`."""
    if pos >= end:
        return end
    match = _SEPARATOR.search(buf, pos, end)
    return match.start() + 1 if match else end


def _after_comma(buf: Buffer, b: int, end: int) -> int:
    """From the end of one item past the comma to the start of the next (or `end`)."""
    i = _skip_ws(buf, b, end)
    if i < end and buf[i] == ord(","):
        i = _skip_ws(buf, i + 1, end)
    return i
