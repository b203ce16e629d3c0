"""Decoding one big file on several cores.

The chunks one pass would cut the event array into (chunks.py) are found first, by the same
rule and without decoding, and grouped into runs of a few chunks. This process decodes the
first run (its first chunk fixes the timestamp base) and then takes runs from the front of the
queue, while worker processes, each fed by a thread of this one (a run ahead while the queue is
long, so that a worker seldom waits on this process), take runs from the same queue and decode
them from their own mapping of the file into an intermediate with their own string tables; so a
run that decodes slowly holds nobody up. The runs are then appended in file order (merge.py),
and the result is the one a single pass gives. Where a run meets anything only the single pass
handles (damage, a cut inside a value, a file that shrinks, a timestamp base the first chunk did
not fix), the whole file is read again in one pass.
"""

from __future__ import annotations

import gc
import mmap
import os
import pickle
import subprocess
import sys
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from ..intermediate import Collected, Progress
from ..merge import append_part
from ..source import Buffer, Source
from . import chunks
from .args import ChunkTable
from .chunks import Irregular, chunk_bounds
from .decode_pass import Decoded, collect_range
from .locate import WHITESPACE, Layout

# Runs per worker: enough that the workers finish together, few enough to merge cheaply.
RUNS_PER_WORKER = 6


class Part(msgspec.Struct):
    """What one process collected of one run of chunks."""

    collected: Collected
    chunks: list[tuple[int, int, int]]  # start, end, first event (counted in the run)
    events: int
    closed: bool  # the event array ended in this run (its end is found while decoding)
    # the top level's keys after the array
    meta: dict[str, Any] = msgspec.field(default_factory=dict)


def read_parallel(
    source: Source, layout: Layout, workers: int, progress: Progress | None
) -> Decoded | None:
    """The file's events read by `workers` processes, or None where one pass must read it."""
    buf = source.data
    if source.gzip or source.handle is None or not _ends_whole(buf):
        return None  # only a whole file on disk can be mapped by another process
    size = chunks.CHUNK_BYTES  # read now: the workers must cut where this process would
    runs = _deal(chunk_bounds(buf, layout, size), workers * RUNS_PER_WORKER)
    if len(runs) < 2:
        return None
    layouts = [_run_layout(layout, a, b, k == len(runs) - 1) for k, (a, b) in enumerate(runs)]
    queue = _Queue(layouts, workers)
    parts: list[Part | None] = [None] * len(runs)
    helpers: list[_Helper] = []
    with tempfile.TemporaryDirectory(prefix="trace-tui-") as spool:
        try:
            # The interpreters start now, beside this process's first chunk; they are fed runs
            # once that chunk has fixed the timestamp base.
            for _ in range(workers - 1):
                helpers.append(_Helper(source, size, queue, parts, Path(spool)))
            k = queue.take()
            base = None
            while k is not None:
                out = Collected(ts_base_us=base or 0)
                table = ChunkTable()
                events = 0
                decoded = collect_range(buf, layouts[k], out, table, source.safe_length, True, size)
                for chunk in decoded:
                    events += len(chunk.events)
                    if base is None:
                        base = out.ts_base_us
                        for helper in helpers:
                            helper.begin(base)
                    if progress is not None:
                        progress(*queue.progress(chunk.end - layouts[k].start, events))
                parts[k] = _part(out, table, events, layouts[k], runs[k][1])
                queue.done(k, events)
                k = queue.take()
            for helper in helpers:
                helper.join()
        except (Irregular, OSError):  # OSError: a worker could not be started
            queue.cancel()
            return None
        finally:
            for helper in helpers:
                helper.stop()
    return _merged(parts, layout, base or 0, progress, len(buf))


def _merged(
    parts: list[Part | None], layout: Layout, base: int, progress: Progress | None, size: int
) -> Decoded | None:
    """The runs appended in file order, up to the one in which the event array ended."""
    whole, table = Collected(ts_base_us=base), ChunkTable()
    meta = dict(layout.meta)
    truncated = False
    events = 0
    for k, part in enumerate(parts):
        if part is None or part.collected.ts_base_us != base:
            return None
        if k == 0:
            whole = part.collected
        else:
            append_part(whole, part.collected, events)
        table.rows += [(a, b, f + events) for a, b, f in part.chunks]
        events += part.events
        truncated = bool(part.meta.pop("_truncated", False))
        if part.closed or k == len(parts) - 1:
            meta.update(part.meta)
            break  # what a later run read lies after the event array
    if progress is not None:
        progress(size, size, events)
    return Decoded(whole, table, truncated, meta)


class _Queue:
    """The runs not yet taken, front first, and how far the load has got."""

    def __init__(self, layouts: list[Layout], takers: int) -> None:
        self.layouts = layouts
        self.takers = takers  # the processes taking runs, this one included
        self.next = 0
        self.cancelled = False
        self.lock = threading.Lock()
        self.total = layouts[-1].end - layouts[0].start
        self.bytes_done = 0
        self.events_done = 0

    def take(self) -> int | None:
        with self.lock:
            if self.next == len(self.layouts):
                return None
            self.next += 1
            return self.next - 1

    def left(self) -> int:
        with self.lock:
            return len(self.layouts) - self.next

    def cancel(self) -> None:
        """No more runs: one has failed, and one pass will read the file."""
        with self.lock:
            self.next = len(self.layouts)
            self.cancelled = True

    def done(self, k: int, events: int) -> None:
        with self.lock:
            self.bytes_done += self.layouts[k].end - self.layouts[k].start
            self.events_done += events

    def progress(self, run_bytes: int, run_events: int) -> tuple[int, int, int]:
        """(bytes done, bytes in all, events done), counting the run this process is in."""
        with self.lock:
            done = min(self.bytes_done + run_bytes, self.total)
            return done, self.total, self.events_done + run_events


class _Helper:
    """A worker process and the thread that feeds it runs from the queue."""

    def __init__(
        self,
        source: Source,
        chunk_bytes: int,
        queue: _Queue,
        parts: list[Part | None],
        spool: Path,  # the folder of the parts' files, one a run
    ) -> None:
        self.path, self.chunk_bytes, self.base = source.path, chunk_bytes, 0
        assert source.handle is not None
        self.identity = _identity(os.fstat(source.handle.fileno()))
        self.queue, self.parts, self.spool = queue, parts, spool
        self.process = _start_worker()
        self.thread = threading.Thread(target=self._feed, daemon=True)

    def begin(self, base: int) -> None:
        """Start feeding runs, whose timestamps are kept relative to `base`."""
        self.base = base
        self.thread.start()

    def _feed(self) -> None:
        """Keep the worker a run ahead while the queue is long: its next run waits in its pipe
        before it finishes the last, because this thread needs this process's lock for every
        step (reading `ok`, loading the part, sending the next run) while the decoding thread
        holds it in long calls, and one run at a time left the worker idle a third of the
        time."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        sent: deque[tuple[int, Path]] = deque()

        def send() -> None:
            if (k := self.queue.take()) is not None:
                spool = self.spool / str(k)  # one file a run: the worker is a run ahead
                layout = self.queue.layouts[k]
                job = (self.path, self.identity, layout, self.base, self.chunk_bytes, spool)
                pickle.dump(job, stdin)
                stdin.flush()
                sent.append((k, spool))

        try:
            send()
            while sent and not self.queue.cancelled:  # cancelled: stop() ends the worker
                # Ahead only while the queue is long: at its end a run held here could leave
                # the other processes idle.
                if len(sent) == 1 and self.queue.left() > self.queue.takers:
                    send()
                k, spool = sent.popleft()
                if stdout.readline() != b"ok\n":
                    self.queue.cancel()  # the run failed (its slot stays None) or the worker died
                    return
                if not sent:
                    send()
                with open(spool, "rb") as f:
                    part = pickle.load(f)
                spool.unlink()
                self.parts[k] = part
                self.queue.done(k, part.events)
        except Exception:  # a worker killed under it (a file cut short, the load cancelled)
            self.queue.cancel()

    def join(self) -> None:
        if self.thread.ident is not None:
            self.thread.join()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self.join()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


def _start_worker() -> subprocess.Popen[bytes]:
    """A fresh interpreter: not a fork, which would copy the viewer's threads, and not
    multiprocessing's spawn, which imports the caller's main module again."""
    package_root = str(Path(__file__).resolve().parents[4])
    path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-c", f"from {__name__} import work; work()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # a worker's troubles must not draw over the viewer
        env={**os.environ, "PYTHONPATH": path},
    )


def work() -> None:
    """In a worker: decode each run it is sent, write its Part to the spool file it names and
    say `ok` (or `failed`: one pass will read the file)."""
    gc.disable()  # it only reads runs, which make no garbage (see gc_pause.py)
    mapped: dict[str, mmap.mmap] = {}
    while True:
        try:
            path, identity, layout, base, chunk_bytes, spool = pickle.load(sys.stdin.buffer)
        except EOFError:
            return
        try:
            if path not in mapped:
                with open(path, "rb") as f:
                    if _identity(os.fstat(f.fileno())) != identity:
                        raise OSError("the file was replaced while being read")
                    mapped[path] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            end = layout.end
            out, table = Collected(ts_base_us=base), ChunkTable()
            decoded = collect_range(
                mapped[path], layout, out, table, strict=True, chunk_bytes=chunk_bytes
            )
            events = sum(len(c.events) for c in decoded)
            _compact(out)
            with open(spool, "wb") as f:
                pickle.dump(_part(out, table, events, layout, end), f, pickle.HIGHEST_PROTOCOL)
            sys.stdout.buffer.write(b"ok\n")
        except Exception:  # Irregular, or anything else: the one pass reads it and says what
            sys.stdout.buffer.write(b"failed\n")
        sys.stdout.buffer.flush()


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """What tells the file this process mapped from another put at its path since."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _part(out: Collected, table: ChunkTable, events: int, layout: Layout, end: int) -> Part:
    return Part(out, table.rows, events, layout.end != end, layout.meta)


def _ends_whole(buf: Buffer) -> bool:
    """Whether the file ends as a complete trace does: one that stops short is read in one
    pass, which salvages what it can."""
    return bytes(buf[-64:]).rstrip(WHITESPACE)[-1:] in (b"}", b"]")


def _deal(bounds: list[tuple[int, int]], runs: int) -> list[tuple[int, int]]:
    """Contiguous runs of chunks of about equal bytes."""
    if not bounds:
        return []
    first, total = bounds[0][0], bounds[-1][1] - bounds[0][0]
    spans: list[tuple[int, int]] = []
    a = first
    for k, (_, b) in enumerate(bounds):
        if b - first >= total * (len(spans) + 1) / runs or k == len(bounds) - 1:
            spans.append((a, b))
            a = bounds[k + 1][0] if k + 1 < len(bounds) else b
    return spans


def _run_layout(layout: Layout, a: int, b: int, last: bool) -> Layout:
    if last:
        return replace(layout, start=a, meta={})
    return replace(layout, start=a, end=b, closed=True, meta={})


def _compact(out: Collected) -> None:
    """What is sent back: whole columns, and the string tables without their lookup dicts."""
    for interner in (out.names, out.cats, out.lanes, out.flow_keys):
        interner.ids = {}
    for columns in (
        out.slices,
        out.begin_end,
        out.instants,
        out.flows,
        out.binds,
        out.asyncs,
        out.memory,
    ):
        for name, parts in columns.parts.items():
            columns.get(name, parts[0].dtype)
