"""The model cache: a loaded trace saved as numpy arrays, so that opening it again is instant.

Entries live in `$TRACE_TUI_CACHE_DIR`, else `$XDG_CACHE_HOME/trace-tui`, else
`~/.cache/trace-tui`, one `.model` file per trace, named by a key made of the trace's real path,
size, modification time and a hash of its first and last 64 KB (and the cache format version).
A changed trace gets a new key; old entries go when the folder passes its size bound (oldest
used first). Writes go to a temporary file renamed into place, so two viewers opening the same
trace never see a half-written entry; an entry that does not read back whole is deleted and
the trace is loaded again. The trace file itself is never written.

Beside an entry, `<key>.facts.json` keeps what an upper layer derived once from the whole trace
(load.Facts: the health checks, say), so that a later run reads them instead of deriving them
again. The key names the trace's content, so facts never outlive it; facts of another version
or that do not read back are derived again and rewritten.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import numpy as np
import orjson

from ..trace import (
    CounterSeries,
    Format,
    Instants,
    Lane,
    Links,
    MemoryEvents,
    Process,
    Slices,
    Trace,
)
from .cache_folder import VERSION, CacheFolder
from .formats import ARGS_READERS

_ALIGN = 64
_ARRAY_GROUPS = {
    "slices": Slices,
    "launches": Links,
    "external": Links,
    "flows": Links,
    "instants": Instants,
    "memory": MemoryEvents,
}


class ModelCache(CacheFolder):
    """The cached models: one entry per trace content, in a `CacheFolder`."""

    def get(self, key: str, path: str) -> Trace | None:
        """The cached model of the file now at `path`, or None (a damaged entry is removed).

        The model is given this path (its args are read from there): the entry may have been
        written through another path to the same file.
        """
        entry = self.entry(key)
        if not entry.exists():
            return None
        try:
            trace = _read(entry, path)
            self.used(key)
            return trace
        except (OSError, ValueError, KeyError, TypeError):
            entry.unlink(missing_ok=True)
            self._facts_file(key).unlink(missing_ok=True)
            return None

    def put(self, key: str, trace: Trace) -> None:
        """Save a model; failure to write (a full disk, no permission) is not an error."""
        if self._write(self.entry(key), lambda f: _save(f, _arrays(trace))):
            self._evict()


def _arrays(trace: Trace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group in _ARRAY_GROUPS:
        columns = getattr(trace, group)
        for name in columns.__struct_fields__:  # the columns, not what is derived from them
            out[f"{group}.{name}"] = getattr(columns, name)
    reader = trace.args_reader
    for name, value in reader.arrays().items():
        out[f"args.{name}"] = value
    lengths = [len(c.ts) for c in trace.counters]
    out["counters.ts"] = np.concatenate([c.ts for c in trace.counters] or [np.zeros(0, np.int64)])
    out["counters.values"] = np.concatenate(
        [c.values for c in trace.counters] or [np.zeros(0, np.float64)]
    )
    meta = {
        "version": VERSION,
        "path": trace.path,
        "format": msgspec.to_builtins(trace.format),
        "names": trace.names,
        "categories": trace.categories,
        "processes": [msgspec.to_builtins(p) for p in trace.processes],
        "lanes": [msgspec.to_builtins(lane) for lane in trace.lanes],
        "counters": [[c.process, c.name, n] for c, n in zip(trace.counters, lengths, strict=True)],
        "origin_us": trace.origin_us,
        "span_ns": trace.span_ns,
        "base_time_ns": trace.base_time_ns,
        "display_time_unit": trace.display_time_unit,
        "devices": trace.devices,
        "metadata": trace.metadata,
        "events_by_phase": trace.events_by_phase,
        "skipped": trace.skipped,
        "adjusted": trace.adjusted,
        "args_reader": reader.name,
    }
    out["meta"] = np.frombuffer(json.dumps(meta, default=str).encode(), np.uint8)
    return out


def _save(f: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    """The arrays as one file: a header of each array's name, dtype, shape and place, then
    their bytes, each at a multiple of 64. (np.savez zips them, and reading a zip checks a CRC
    of every byte: 20 ms of a cached `info` at 1M events.)"""
    places, at = [], 0
    for name, array in arrays.items():
        places.append([name, array.dtype.str, list(array.shape), at])
        at += -(-array.nbytes // _ALIGN) * _ALIGN
    header = orjson.dumps({"version": VERSION, "arrays": places, "bytes": at})
    start = -(-(8 + len(header)) // _ALIGN) * _ALIGN
    f.write(len(header).to_bytes(8, "little") + header + bytes(start - 8 - len(header)))
    for array in arrays.values():
        data = np.ascontiguousarray(array).tobytes()
        f.write(data + bytes(-len(data) % _ALIGN))


def _load(entry: Path) -> dict[str, np.ndarray]:
    """The arrays `_save` wrote, as views of one buffer read whole.

    Raises:
        ValueError: the file is not whole, or of another version.
    """
    with entry.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = orjson.loads(f.read(size))
        if not isinstance(header, dict) or header.get("version") != VERSION:
            raise ValueError("cache format changed")
        f.seek(-(-(8 + size) // _ALIGN) * _ALIGN)
        data = bytearray(header["bytes"])  # writable, as arrays loaded any other way
        if f.readinto(data) != len(data) or f.read(1):
            raise ValueError("not the length its header says")
    out = {}
    for name, dtype, shape, at in header["arrays"]:
        kind = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        out[name] = np.frombuffer(data, kind, count, at).reshape(shape)
    return out


def _read(entry: Path, path: str) -> Trace:
    arrays = _load(entry)
    meta: dict[str, Any] = json.loads(arrays.pop("meta").tobytes())
    if meta.get("version") != VERSION:
        raise ValueError("cache format changed")
    groups = {
        group: cls(
            **{k.split(".", 1)[1]: v for k, v in arrays.items() if k.startswith(group + ".")}
        )
        for group, cls in _ARRAY_GROUPS.items()
    }
    counters, at = [], 0
    for process, name, n in meta["counters"]:
        counters.append(
            CounterSeries(
                process,
                name,
                arrays["counters.ts"][at : at + n],
                arrays["counters.values"][at : at + n],
            )
        )
        at += n
    make_reader = ARGS_READERS[meta["args_reader"]]
    reader_arrays = {k[len("args.") :]: v for k, v in arrays.items() if k.startswith("args.")}
    return Trace(
        path=path,
        format=Format(**meta["format"]),
        names=meta["names"],
        categories=meta["categories"],
        processes=[Process(**{**p, "lanes": tuple(p["lanes"])}) for p in meta["processes"]],
        lanes=[Lane(**lane) for lane in meta["lanes"]],
        slices=groups["slices"],
        launches=groups["launches"],
        external=groups["external"],
        flows=groups["flows"],
        instants=groups["instants"],
        memory=groups["memory"],
        counters=counters,
        origin_us=meta["origin_us"],
        span_ns=meta["span_ns"],
        base_time_ns=meta["base_time_ns"],
        display_time_unit=meta["display_time_unit"],
        devices=meta["devices"],
        metadata=meta["metadata"],
        events_by_phase=Counter(meta["events_by_phase"]),
        skipped=Counter(meta["skipped"]),
        adjusted=Counter(meta["adjusted"]),
        args_reader=make_reader(path, reader_arrays),
    )
