"""One pass over (a byte range of) the event array: decode each chunk, sort its events into the
intermediate, note its byte range for the args reader, and hand its pages back."""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from ..intermediate import Collected
from ..source import Buffer
from .args import ChunkTable
from .chunks import decode_chunks
from .collect import collect_chunk
from .events import Chunk
from .locate import Layout


class Decoded(msgspec.Struct):
    """The event array read: its events collected, its chunks, whether it stopped short, and
    the top level's other keys."""

    collected: Collected
    chunks: ChunkTable
    truncated: bool
    meta: dict[str, Any]


def collect_range(
    buf: Buffer,
    layout: Layout,
    out: Collected,
    table: ChunkTable,
    readable: Callable[[], int] | None = None,
    strict: bool = False,
    chunk_bytes: int = 0,
) -> Iterator[Chunk]:
    """Collect the events of `layout`'s range into `out`, yielding each chunk once it is in."""
    release = _Releaser(buf, layout.start)
    for chunk in decode_chunks(buf, layout, out.skipped, readable, strict, chunk_bytes):
        table.add(chunk)
        collect_chunk(out, chunk, buf)
        release.upto(chunk.start)
        yield chunk


class _Releaser:
    """Hands decoded pages of a memory-mapped file back to the page cache as loading goes, so
    that the process never holds the whole file (it stays cached for a later args lookup)."""

    def __init__(self, buf: Buffer, start: int) -> None:
        self.buf = buf if isinstance(buf, mmap.mmap) else None
        self.done = start - start % mmap.PAGESIZE

    def upto(self, offset: int) -> None:
        if self.buf is None:
            return
        end = offset - offset % mmap.PAGESIZE
        if end > self.done:
            self.buf.madvise(mmap.MADV_DONTNEED, self.done, end - self.done)
            self.done = end
