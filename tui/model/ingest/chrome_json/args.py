"""Lazy args for Chrome JSON traces: an event's args are decoded from the file when it is shown.

The loader keeps, per decoded chunk, its byte range and the index of its first event; a lookup
decodes that chunk's args once (as undecoded JSON text per event) and keeps the last chunk, since
the next lookup is usually a neighbour (the details panel walking a row, the kernel table reading
the geometry of many kernels).
"""

from __future__ import annotations

import json
import threading
from typing import Any, ClassVar

import msgspec
import numpy as np
import numpy.typing as npt

from ..gc_pause import gc_paused
from ..source import Buffer, Source, read_source
from .events import Chunk

I64 = npt.NDArray[np.int64]
ARGS_GONE = "(the file changed after loading: its args cannot be read)"
ARGS_UNREADABLE = "(args too deeply nested or malformed to show)"

_NULL = msgspec.Raw(b"null")


class _RawArgs(msgspec.Struct, gc=False):
    # Raw cannot be in a union with None: an absent args reads as the JSON text `null`.
    args: msgspec.Raw = msgspec.Raw(b"null")


class _Shapes(msgspec.Struct, gc=False):
    # Raw: the chunk's other events build no Python lists (the collector would chase them);
    # only the events asked for are decoded further.
    dims: msgspec.Raw = msgspec.field(default=_NULL, name="Input Dims")
    types: msgspec.Raw = msgspec.field(default=_NULL, name="Input type")
    concrete: msgspec.Raw = msgspec.field(default=_NULL, name="Concrete Inputs")


class _ShapeEvent(msgspec.Struct, gc=False):
    args: _Shapes | None = None


class JsonArgs:
    """The args of any event of a Chrome JSON trace, read back from its file."""

    name: ClassVar[str] = "chrome_json"

    def __init__(self, path: str, start: I64, end: I64, first: I64, source: Source | None) -> None:
        self.path = path
        self.start, self.end, self.first = start, end, first
        self._source = source
        self._lock = threading.Lock()  # the UI thread and a worker may both look up
        self._kept: tuple[int, list[bytes | None] | None] = (-1, None)

    @classmethod
    def from_arrays(cls, path: str, arrays: dict[str, I64]) -> JsonArgs:
        """The reader of a cached model; `open` reads the file again."""
        return cls(path, arrays["start"], arrays["end"], arrays["first"], None)

    def arrays(self) -> dict[str, I64]:
        """What the model cache keeps of this reader."""
        return {"start": self.start, "end": self.end, "first": self.first}

    def open(self) -> None:
        """Open the file for later lookups (after a cache hit, in the load worker: a gzip trace
        is decompressed here, not on the first lookup in the UI thread)."""
        with self._lock:
            if self._source is None:
                self._source = read_source(self.path)

    def args(self, event: int) -> Any:
        """The decoded args of event `event`, None when it has none."""
        c = int(np.searchsorted(self.first, event, side="right")) - 1
        if c < 0:
            return None
        with self._lock:
            if self._source is None:
                self._source = read_source(self.path)
            kept, raws = self._kept
            if kept != c:
                start, end = int(self.start[c]), int(self.end[c])
                if end > self._source.safe_length():
                    return ARGS_GONE
                raws = _args_in(self._source.data, start, end)
                self._kept = (c, raws)
        index = event - int(self.first[c])
        raw = raws[index] if raws is not None and index < len(raws) else None
        if raw is None:
            return None
        try:
            return decode_args(raw)
        except (ValueError, RecursionError):
            return ARGS_UNREADABLE

    def shapes(self, events: I64) -> list[dict[str, Any] | None]:
        """The shape args of many events: each chunk they fall in is decoded once, typed, for
        those three keys only (the rest of each event is skipped over)."""
        out: list[dict[str, Any] | None] = [None] * len(events)
        if not len(events):
            return out
        with self._lock:
            if self._source is None:
                self._source = read_source(self.path)
            source = self._source
        # Many small lists are made here and none is garbage: the collector's passes over a
        # big heap would cost three times the decoding.
        with gc_paused():
            self._shapes_into(out, events, source)
        return out

    def _shapes_into(self, out: list[dict[str, Any] | None], events: I64, source: Source) -> None:
        chunk = np.searchsorted(self.first, events, side="right") - 1
        order = np.argsort(chunk, kind="stable")
        bounds = np.flatnonzero(np.diff(chunk[order])) + 1
        for group in np.split(order, bounds):
            c = int(chunk[group[0]])
            if c < 0:
                continue
            start, end = int(self.start[c]), int(self.end[c])
            if end > source.safe_length():
                continue
            payload = b"".join((b"[", memoryview(source.data)[start:end], b"]"))
            try:
                decoded = msgspec.json.decode(payload, type=list[_ShapeEvent])
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                for k in group.tolist():  # a chunk msgspec refuses: one event at a time
                    args = self.args(int(events[k]))
                    out[k] = args if isinstance(args, dict) else None
                continue
            base = int(self.first[c])
            for k in group.tolist():
                index = int(events[k]) - base
                found = decoded[index].args if 0 <= index < len(decoded) else None
                if found is not None:
                    out[k] = {
                        "Input Dims": msgspec.json.decode(found.dims),
                        "Input type": msgspec.json.decode(found.types),
                        "Concrete Inputs": msgspec.json.decode(found.concrete),
                    }

    def nbytes(self) -> int:
        return int(self.start.nbytes + self.end.nbytes + self.first.nbytes)


class ChunkTable:
    """Byte ranges of the chunks as they are decoded, for the args reader."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, int]] = []

    def add(self, chunk: Chunk) -> None:
        self.rows.append((chunk.start, chunk.end, chunk.first))

    def reader(self, source: Source) -> JsonArgs:
        table = np.asarray(self.rows, np.int64).reshape(-1, 3)
        return JsonArgs(
            source.path, table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy(), source
        )


def chunk_args(buf: Buffer, chunk: Chunk) -> list[bytes | None] | None:
    """The undecoded args of every event of a chunk, or None when it cannot be read again."""
    return _args_in(buf, chunk.start, chunk.end)


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


def _loads_stdlib(payload: bytes) -> list[Any] | None:
    """Any JSON array the stdlib can read (exact big integers, NaN), or None."""
    try:
        items = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    return items if isinstance(items, list) else None
