"""The Chrome JSON importer: torch.profiler, Kineto, Perfetto, catapult and viztracer exports.

`read` finds the event array (locate), decodes it a chunk at a time (chunks, events, salvage),
sorts the events by phase into the intermediate (collect) and keeps a table of chunks from which
an event's args are decoded again when they are shown (args).

The importer's modules are imported when a file is read (importer.py), not when a cached model
is opened: that needs only the args reader.
"""

from __future__ import annotations

from ..intermediate import Imported, Progress
from ..source import Source
from .args import JsonArgs

NAME = JsonArgs.name
# Below this, starting workers costs more than it saves (an interpreter with numpy: ~0.2 s).
PARALLEL_FROM_BYTES = 128 << 20

__all__ = ["NAME", "PARALLEL_FROM_BYTES", "JsonArgs", "read"]


def read(source: Source, progress: Progress | None = None, workers: int = 1) -> Imported:
    """See importer.read."""
    from .importer import read as read_file

    return read_file(source, progress, workers)
