"""Decoding a Chrome trace's event array one byte range at a time.

The event array is cut at event boundaries into chunks of a few MB and each chunk is decoded into
`Event` structs (events.py). A chunk with broken JSON is split around the damage (salvage.py), so
one bad event costs one event, and a file cut off by a crashed writer keeps every complete event.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator

from ..source import Buffer
from .events import Chunk, Failure, decode_range
from .locate import Layout, skip_ws, strip_tail, tail_keys
from .salvage import TailState, item_end_after, salvage

CHUNK_BYTES = 4 << 20

# Between two events: the end of one object, a comma, the start of the next. A split chosen here
# can only land inside a string or a nested array, and then the chunk fails as truncated.
_SEPARATOR = re.compile(rb"\}\s*,\s*\{")


def decode_chunks(
    buf: Buffer,
    layout: Layout,
    skipped: Counter[str],
    readable: Callable[[], int] | None = None,
    strict: bool = False,
    chunk_bytes: int = 0,
) -> Iterator[Chunk]:
    """Decode the event array chunk by chunk; damage is skipped and counted in `skipped`.

    Sets `layout.meta["_truncated"]` when the array stops without its closing bracket.

    Args:
        readable: how many bytes of `buf` may be read now (a file truncated by another program
            while it is mapped); decoding stops there.
        strict: raise `Irregular` instead of widening a chunk, salvaging damage or stopping
            short: a part decoded apart from the rest (parallel.py) must cut exactly where one
            pass would, or be decoded again by one pass.
        chunk_bytes: the chunk size (CHUNK_BYTES unless given).
    """
    size = chunk_bytes or CHUNK_BYTES
    view = memoryview(buf)
    end = layout.end if layout.closed else strip_tail(buf, layout.start, layout.end)
    a = skip_ws(buf, layout.start, end)
    first = 0
    state = TailState(closed=layout.closed, end=end)
    while a < end:
        if readable is not None and readable() < end:
            if strict:
                raise Irregular("the file shrank while being read")
            end = state.end = readable()
            layout.meta["_shrank"] = True
            if a >= end:
                break
        b = _boundary_after(buf, a + size, end)
        result = decode_range(view, a, b)
        while isinstance(result, Failure) and result.at_end and b < end and not strict:
            b = _boundary_after(buf, b + 1, end)  # the cut fell inside a value: widen
            result = decode_range(view, a, b)
        if isinstance(result, Failure) and result.closed_at >= 0 and layout.open_end:
            closer = a + result.closed_at
            tail = tail_keys(buf, closer)
            if tail is not None:  # the object really goes on after the array: it ended here
                layout.end, layout.closed = closer, True
                layout.meta.update(tail)
                end = state.end = strip_tail(buf, a, closer)
                b = end
                result = decode_range(view, a, b) if a < b else ([], False)
        if isinstance(result, Failure) and strict:
            raise Irregular(result.reason)
        if isinstance(result, Failure):
            # Damage: re-cut at a boundary found by a careful scan, then go event by event.
            b = item_end_after(buf, a, b, end)
            chunks = list(salvage(view, buf, a, b, first, skipped, state))
        else:
            chunks = [Chunk(a, b, first, *result)] if result[0] else []
        for chunk in chunks:
            yield chunk
            first += len(chunk.events)
        a = _after_comma(buf, b, end)
    layout.meta["_truncated"] = state.truncated or not layout.closed


class Irregular(Exception):
    """A strict decode met what only the one-pass decode handles: damage, or a cut inside a
    value."""


def chunk_bounds(buf: Buffer, layout: Layout, chunk_bytes: int) -> list[tuple[int, int]]:
    """The byte ranges that `decode_chunks` cuts an undamaged event array into, found by the
    same rule without decoding (for an array whose end is found while decoding, up to the
    end of the file)."""
    end = layout.end if layout.closed else strip_tail(buf, layout.start, layout.end)
    a = skip_ws(buf, layout.start, end)
    bounds = []
    while a < end:
        b = _boundary_after(buf, a + chunk_bytes, end)
        bounds.append((a, b))
        a = _after_comma(buf, b, end)
    return bounds


def _boundary_after(buf: Buffer, pos: int, end: int) -> int:
    """The end (just past the '}') of the first event that ends after `pos`, or `end`."""
    if pos >= end:
        return end
    match = _SEPARATOR.search(buf, pos, end)
    return match.start() + 1 if match else end


def _after_comma(buf: Buffer, b: int, end: int) -> int:
    """From the end of one item past the comma to the start of the next (or `end`)."""
    i = skip_ws(buf, b, end)
    if i < end and buf[i] == ord(","):
        i = skip_ws(buf, i + 1, end)
    return i
