"""The Chrome JSON importer: torch.profiler, Kineto, Perfetto, catapult and viztracer exports.

`read` finds the event array (locate), decodes it a chunk at a time (chunks, events, salvage),
sorts the events by phase into the intermediate (collect) and keeps a table of chunks from which
an event's args are decoded again when they are shown (args).
"""

from __future__ import annotations

import mmap

from ...errors import TraceError
from ..intermediate import Collected, Imported, Progress
from ..source import Buffer, Source
from .args import ChunkTable, JsonArgs
from .chunks import decode_chunks
from .collect import collect_chunk
from .locate import locate_events

NAME = JsonArgs.name

__all__ = ["NAME", "JsonArgs", "read"]


def read(source: Source, progress: Progress | None = None) -> Imported:
    """One pass over the file's events.

    Raises:
        TraceError: the file is not JSON, or holds no trace events.
    """
    buf = source.data
    layout = locate_events(buf, source.path)
    out = Collected()
    chunks = ChunkTable()
    release = _Releaser(buf)
    for chunk in decode_chunks(buf, layout, out.skipped, source.safe_length):
        chunks.add(chunk)
        collect_chunk(out, chunk, buf)
        release.upto(chunk.start)
        if progress is not None:
            progress(chunk.end, len(buf), chunk.first + len(chunk.events))
    if sum(n for ph, n in out.by_phase.items() if ph) == 0 and (out.by_phase or out.skipped):
        raise TraceError(source.path, "not a trace: no item of the event array is a trace event")
    truncated = bool(layout.meta.pop("_truncated")) or source.gzip_truncated
    if layout.meta.pop("_shrank", False):
        out.adjusted["file shrank while being read: what was left is shown"] += 1
        truncated = True
    return Imported(out, layout.form, truncated, layout.meta, chunks.reader(source))


class _Releaser:
    """Hands decoded pages of a memory-mapped file back to the page cache as loading goes, so
    that the process never holds the whole file (it stays cached for a later args lookup)."""

    def __init__(self, buf: Buffer) -> None:
        self.buf = buf if isinstance(buf, mmap.mmap) else None
        self.done = 0

    def upto(self, offset: int) -> None:
        if self.buf is None:
            return
        end = offset - offset % mmap.PAGESIZE
        if end > self.done:
            self.buf.madvise(mmap.MADV_DONTNEED, self.done, end - self.done)
            self.done = end
