"""Decoding a byte range of the event array into `Event` structs that hold only what is needed.

msgspec decodes a range typed (fast, and no dict per event); a range whose events have unexpected
types is decoded again leniently and coerced event by event, and a range msgspec refuses (NaN,
Infinity, 1e400) is read with the stdlib. A range that is not JSON says where it broke, so the
caller can widen it or salvage it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import numpy as np

_ERROR_BYTE = re.compile(r"\(byte (\d+)\)")

_TOO_DEEP = "nested too deeply to decode"


class Args(msgspec.Struct, gc=False):
    """The few args the loader needs; the rest are decoded lazily when a slice is shown."""

    correlation: Any = None
    # The CPU op a kernel or launch belongs to: torch's key_averages() joins GPU time on it.
    external: Any = msgspec.field(default=None, name="External id")
    name: Any = None
    labels: Any = None
    sort_index: Any = None
    # Kineto's [memory] records: decoded here so that no chunk is decoded twice during load.
    bytes: Any = msgspec.field(default=None, name="Bytes")
    total_allocated: Any = msgspec.field(default=None, name="Total Allocated")
    total_reserved: Any = msgspec.field(default=None, name="Total Reserved")
    device_type: Any = msgspec.field(default=None, name="Device Type")
    device_id: Any = msgspec.field(default=None, name="Device Id")


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


class Chunk(msgspec.Struct):
    """Events decoded from buf[start:end]; event i of the chunk has index `first + i`."""

    start: int
    end: int
    first: int
    events: list[Event]
    lenient: bool


class Failure(msgspec.Struct):
    at_end: bool  # the chunk ended inside a value: widening it may fix it
    closed_at: int = -1  # the event array closed inside the chunk, at this text offset
    reason: str = "malformed JSON"


def decode_range(view: memoryview, a: int, b: int) -> tuple[list[Event], bool] | Failure:
    """Decode buf[a:b] as events: typed and fast, else leniently, else say where it broke."""
    payload = b"".join((b"[", view[a:b], b"]"))
    try:
        return msgspec.json.decode(payload, type=list[Event]), False
    except msgspec.ValidationError:
        pass
    except msgspec.DecodeError as e:
        return _lenient(payload, e)
    except RecursionError:
        return Failure(False, reason=_TOO_DEEP)
    try:
        items = msgspec.json.decode(payload)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        return _lenient(payload, e)
    except RecursionError:
        return Failure(False, reason=_TOO_DEEP)
    return [to_event(item) for item in items], True


def _lenient(payload: bytes, error: Exception) -> tuple[list[Event], bool] | Failure:
    """Read what msgspec refuses (NaN, Infinity, 1e400) with the stdlib.

    A chunk that was cut inside a value fails at its end: that is reported, not read.
    """
    match = _ERROR_BYTE.search(str(error))
    if match is not None and "trailing characters" in str(error):
        # The array's own ']' came before the chunk's end: the events stop there.
        close = payload.rfind(b"]", 0, int(match.group(1)))
        return Failure(False, close - 1)
    if str(error).startswith("Input data was truncated") or (
        match is not None and int(match.group(1)) >= len(payload) - 1
    ):
        return Failure(True)
    try:
        items = json.loads(payload)
    except (ValueError, RecursionError):
        return Failure(False)
    return [to_event(item) for item in items], True


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
            external=args.get("External id"),
            name=args.get("name"),
            labels=args.get("labels"),
            sort_index=args.get("sort_index"),
            bytes=args.get("Bytes"),
            total_allocated=args.get("Total Allocated"),
            total_reserved=args.get("Total Reserved"),
            device_type=args.get("Device Type"),
            device_id=args.get("Device Id"),
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
