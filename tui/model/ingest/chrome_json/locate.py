"""Finding the event array of an object-form or array-form trace, and the top level's other keys."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import numpy as np

from ...errors import TraceError
from ..source import UTF8_BOM, Buffer
from .args import decode_args

_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')

WHITESPACE = b" \t\r\n"

# Top-level values bigger than this are not kept (viztracer embeds whole source files).
_MAX_META_BYTES = 1 << 20


class Layout(msgspec.Struct):
    """Where the events are in the file, and what else the top level says."""

    form: str  # "object" or "array"
    start: int  # first byte inside the event array
    end: int  # the closing "]", or the end of the data when it is missing
    closed: bool
    meta: dict[str, Any] = msgspec.field(default_factory=dict)
    open_end: bool = False  # object form: where the array closes is found while decoding


def locate_events(buf: Buffer, name: str) -> Layout:
    """Find the event array of an object-form or array-form trace (formats.guess has seen
    that the text starts with '{' or '[', or is only white space)."""
    first = _first_byte(buf)
    if first is None:
        raise TraceError(name, "file is empty or only whitespace")
    if buf[first : first + 1] == b"[":
        end = _closing_bracket(buf)
        return Layout("array", first + 1, end if end is not None else len(buf), end is not None)
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
    head = bytes(buf[: match.start()]).rstrip(WHITESPACE).rstrip(b",")
    meta: dict[str, Any] = {}
    try:
        meta = _small_meta(msgspec.json.decode(head + b"}", type=dict[str, msgspec.Raw]))
    except (msgspec.DecodeError, msgspec.ValidationError):
        if strict:
            return None  # the key sits inside another value
    return Layout("object", match.end(), len(buf), False, meta, open_end=True)


def tail_keys(buf: Buffer, pos: int) -> dict[str, Any] | None:
    """The keys after a ']' at `pos` if the text after it ends the top-level object."""
    after = skip_ws(buf, pos + 1, len(buf))
    if after >= len(buf) or buf[after] not in b",}":
        return None
    rest = bytes(buf[after:]).rstrip(WHITESPACE)
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
    i = skip_ws(buf, 3 if bytes(buf[:3]) == UTF8_BOM else 0, len(buf))
    return i if i < len(buf) else None


def skip_ws(buf: Buffer, i: int, end: int) -> int:
    while i < end and buf[i] in WHITESPACE:
        i += 1
    return i


def _closing_bracket(buf: Buffer) -> int | None:
    """Index of an array-form trace's closing ']' when the data ends with it."""
    i = len(buf) - 1
    while i >= 0 and buf[i] in WHITESPACE:
        i -= 1
    return i if i >= 0 and buf[i] == ord("]") else None


def strip_tail(buf: Buffer, start: int, end: int) -> int:
    """An unclosed array's end, less the trailing whitespace and comma a dead writer left."""
    while end > start and buf[end - 1] in WHITESPACE + b",":
        end -= 1
    return end
