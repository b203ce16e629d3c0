"""`load_trace`: from a path to a `Trace`, through the model cache or an importer."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Any

import msgspec
from msgspec.structs import replace

from ..errors import TraceError
from ..trace import Format, Trace
from .cache import ModelCache
from .cores import default_workers
from .formats import format_for, refuse, resolve
from .gc_pause import gc_paused
from .intermediate import Progress
from .source import read_source

# Keeps a new set of facts beside the trace's cache entry, in place of those kept before.
Keep = Callable[[dict[str, Any]], None]


class Facts(msgspec.Struct, frozen=True):
    """What an upper layer derives from a whole trace, for the model cache to keep beside it
    (this layer knows nothing of what they are).

    Attributes:
        version: names the shape of the data and what derived it; facts kept with another
            version are not given back.
        attach: called with a trace loaded through the cache, the facts kept for it (JSON-ready;
            None when there are none) and a `Keep`; it puts the kept facts back and has those
            derived later kept.
    """

    version: str
    attach: Callable[[Trace, dict[str, Any] | None, Keep], None]


def load_trace(
    path: str | os.PathLike[str],
    progress: Progress | None = None,
    cache: ModelCache | None = None,
    workers: int | None = None,
    facts: Facts | None = None,
) -> Trace:
    """Load a trace file (or the newest trace in a folder).

    Args:
        progress: called after each chunk with (bytes done, bytes in all, events done); it may
            raise to stop the load.
        cache: where to find the model of a trace loaded before, and keep this one.
        workers: processes that decode one big file together; by default the cores for a file
            of its format's `parallel_from` or more, else one (see chrome_json/parallel.py).
        facts: kept beside the cache's entry as they are derived, and given back to the next
            load of the same content (without a cache they are derived on first use, as
            without `facts`).

    Raises:
        TraceError: the file cannot be read or holds no trace; the message names both.
    """
    file, folder = resolve(path) if str(path) != "-" else (None, None)
    if cache is not None and file is not None and stat.S_ISREG(os.stat(file).st_mode):
        try:
            key = cache.key(str(file))
        except OSError as e:
            raise TraceError(str(file), f"cannot read: {e.strerror or e}") from None
        trace = cache.get(key, str(file))
        if trace is not None:
            trace.format = replace(trace.format, chosen_from=folder)
        else:
            trace = load_trace(path, progress, workers=workers)
            cache.put(key, trace)
        if facts is not None:
            version = facts.version
            kept = cache.facts(key, version)
            facts.attach(trace, kept, lambda new: cache.put_facts(key, version, new))
        return trace
    source = read_source(file or path, folder, check=refuse)
    door = format_for(source)
    if workers is None:
        big = door.parallel_from is not None and len(source.data) >= door.parallel_from
        workers = default_workers() if big else 1
    from .assemble import assemble  # a cached model needs none of it: not at start-up

    with gc_paused():
        imported = door.read(source, progress, workers)
        fmt = Format(imported.form, source.gzip, imported.truncated, source.chosen_from)
        return assemble(source.path, fmt, imported, threads=workers > 1)
