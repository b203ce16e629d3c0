"""`load_trace`: from a path to a `Trace`, through the model cache or an importer."""

from __future__ import annotations

import os
import stat
from dataclasses import replace

from ..errors import TraceError
from ..trace import Format, Trace
from .assemble import assemble
from .cache import ModelCache
from .chrome_json.parallel import PARALLEL_FROM_BYTES
from .cores import default_workers
from .formats import importer_for
from .intermediate import Progress
from .source import read_source, resolve


def load_trace(
    path: str | os.PathLike[str],
    progress: Progress | None = None,
    cache: ModelCache | None = None,
    workers: int | None = None,
) -> Trace:
    """Load a trace file (or the newest trace in a folder).

    Args:
        progress: called after each chunk with (bytes done, bytes in all, events done); it may
            raise to stop the load.
        cache: where to find the model of a trace loaded before, and keep this one.
        workers: processes that decode one big file together; by default the cores for a file
            of PARALLEL_FROM_BYTES or more, else one (see chrome_json/parallel.py).

    Raises:
        TraceError: the file cannot be read or holds no trace; the message names both.
    """
    file, folder = resolve(path) if str(path) != "-" else (None, None)
    if cache is not None and file is not None and stat.S_ISREG(os.stat(file).st_mode):
        try:
            key = cache.key(str(file))
        except OSError as e:
            raise TraceError(str(file), f"cannot read: {e.strerror or e}") from None
        found = cache.get(key, str(file))
        if found is not None:
            found.format = replace(found.format, chosen_from=folder)
            return found
        trace = load_trace(path, progress, workers=workers)
        cache.put(key, trace)
        return trace
    source = read_source(path)
    if workers is None:
        workers = default_workers() if len(source.data) >= PARALLEL_FROM_BYTES else 1
    imported = importer_for(source)(source, progress, workers)
    fmt = Format(imported.form, source.gzip, imported.truncated, source.chosen_from)
    return assemble(source.path, fmt, imported, threads=workers > 1)
