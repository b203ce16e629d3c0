"""How much memory a load will take, and how much the machine has free."""

from __future__ import annotations

import os
import stat
import struct

from ..errors import TraceError
from .formats import resolve
from .source import GZIP_MAGIC

# Measured peak RSS of a load, per byte of JSON (tests/bench/README.md: 0.9x at 1M events),
# with room to spare, plus the interpreter and its libraries.
PEAK_PER_JSON_BYTE = 1.0
BASE_BYTES = 100 << 20
# gzip stores the uncompressed size modulo 4 GiB; beyond that, assume a typical ratio.
TYPICAL_GZIP_RATIO = 10


def estimate_memory(path: str | os.PathLike[str]) -> int:
    """Bytes a load of `path` is likely to need at its peak (0 when it cannot be told)."""
    try:
        file, _ = resolve(path)
        if not stat.S_ISREG(os.stat(file).st_mode):
            return 0  # a pipe: reading it here would take bytes from the loader
        size = os.path.getsize(file)
        with open(file, "rb") as f:
            gzipped = f.read(2) == GZIP_MAGIC
            if gzipped and size >= 4:
                f.seek(-4, os.SEEK_END)
                stored = struct.unpack("<I", f.read(4))[0]
    except (OSError, ValueError, TraceError):
        return 0
    json_bytes = size
    if gzipped:
        json_bytes = stored if stored >= size else size * TYPICAL_GZIP_RATIO
    return int(json_bytes * PEAK_PER_JSON_BYTE) + BASE_BYTES


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo (None where the system does not say)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
