"""Reading a Chrome JSON file: one pass over its events, split across processes where it pays."""

from __future__ import annotations

from ...errors import TraceError
from ..intermediate import Collected, Imported, Progress
from ..source import Source
from .args import ChunkTable
from .decode_pass import Decoded, collect_range
from .locate import Layout, locate_events
from .parallel import read_parallel


def read(source: Source, progress: Progress | None = None, workers: int = 1) -> Imported:
    """One pass over the file's events (split across `workers` processes where it can be).

    Raises:
        TraceError: the file is not JSON, or holds no trace events.
    """
    layout = locate_events(source.data, source.path)
    done = read_parallel(source, layout, workers, progress) if workers > 1 else None
    if done is None:
        if workers > 1:
            layout = locate_events(source.data, source.path)  # the parts may have changed it
        done = _one_pass(source, layout, progress)
    out = done.collected
    if sum(n for ph, n in out.by_phase.items() if ph) == 0 and (out.by_phase or out.skipped):
        raise TraceError(source.path, "not a trace: no item of the event array is a trace event")
    truncated = done.truncated or source.gzip_truncated
    return Imported(out, layout.form, truncated, done.meta, done.chunks.reader(source))


def _one_pass(source: Source, layout: Layout, progress: Progress | None) -> Decoded:
    buf = source.data
    out = Collected()
    chunks = ChunkTable()
    for chunk in collect_range(buf, layout, out, chunks, source.safe_length):
        if progress is not None:
            progress(chunk.end, len(buf), chunk.first + len(chunk.events))
    truncated = bool(layout.meta.pop("_truncated"))
    if layout.meta.pop("_shrank", False):
        out.adjusted["file shrank while being read: what was left is shown"] += 1
        truncated = True
    return Decoded(out, chunks, truncated, layout.meta)
