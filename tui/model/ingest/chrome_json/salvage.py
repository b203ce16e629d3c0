"""Salvaging a damaged byte range: event by event, so that one bad event costs one event.

Only damaged ranges come here, so a careful scan (strings and nesting tracked) replaces the quick
separator search that a string holding "}, {" can fool.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

import msgspec

from ..source import Buffer
from .events import Chunk, Event, Failure, decode_range
from .locate import WHITESPACE


class TailState(msgspec.Struct):
    closed: bool
    end: int
    truncated: bool = False


def salvage(
    view: memoryview,
    buf: Buffer,
    a: int,
    b: int,
    first: int,
    skipped: Counter[str],
    state: TailState,
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
        result = decode_range(view, start, end)
        if not isinstance(result, Failure) and len(result[0]) == 1:
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
        elif bytes(buf[start:end]).strip(WHITESPACE):
            skipped[result.reason if isinstance(result, Failure) else "malformed JSON"] += 1
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


def item_end_after(buf: Buffer, a: int, target: int, end: int) -> int:
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
