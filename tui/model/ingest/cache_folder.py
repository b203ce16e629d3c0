"""The model cache's folder: where it is, the key that names a trace's content, the facts kept
beside an entry, atomic writes and the size bound. No numpy and no trace types, so that `info`
can read a cached trace's facts without importing the model (see passes/kept_info.py); the
entries themselves are cache.py's."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import orjson

VERSION = 8  # of the entries' format; part of every key
SUFFIX = ".model"
DEFAULT_MAX_BYTES = 2 << 30
_EDGE_BYTES = 64 << 10


def default_dir() -> Path:
    if os.environ.get("TRACE_TUI_CACHE_DIR"):
        return Path(os.environ["TRACE_TUI_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trace-tui"


class CacheFolder:
    """A folder of cached entries and their facts, bounded in size."""

    def __init__(self, folder: Path | None = None, max_bytes: int | None = None) -> None:
        self.folder = folder or default_dir()
        limit = os.environ.get("TRACE_TUI_CACHE_MAX_MB")
        self.max_bytes = max_bytes or (int(limit) << 20 if limit else DEFAULT_MAX_BYTES)

    def key(self, path: str) -> str:
        """Identifies the exact content at `path` without reading all of it."""
        real = os.path.realpath(path)
        st = os.stat(real)
        # A file name that is not UTF-8 (surrogate-escaped by Python) hashes by its bytes.
        h = hashlib.sha256(f"{VERSION}\0".encode() + os.fsencode(real))
        h.update(f"\0{st.st_size}\0{st.st_mtime_ns}".encode())
        with open(real, "rb") as f:
            h.update(f.read(_EDGE_BYTES))
            if st.st_size > _EDGE_BYTES:
                f.seek(max(st.st_size - _EDGE_BYTES, _EDGE_BYTES))
                h.update(f.read())
        return h.hexdigest()[:32]

    def entry(self, key: str) -> Path:
        return self.folder / f"{key}{SUFFIX}"

    def used(self, key: str) -> None:
        """Mark entry `key` most recently used: evicted last."""
        with contextlib.suppress(OSError):  # gone meanwhile: its facts still name the same content
            os.utime(self.entry(key))

    def _facts_file(self, key: str) -> Path:
        return self.folder / f"{key}.facts.json"

    def facts(self, key: str, version: str) -> dict[str, Any] | None:
        """The facts kept beside entry `key`; None when there are none, they are of another
        version, or they do not read back."""
        try:
            stored = orjson.loads(self._facts_file(key).read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(stored, dict) or stored.get("version") != version:
            return None
        found = stored.get("facts")
        return found if isinstance(found, dict) else None

    def put_facts(self, key: str, version: str, facts: dict[str, Any]) -> None:
        """Keep facts beside entry `key`; failure to write is not an error."""
        # orjson: a NaN is written as null, which no fact reads back: it is derived again.
        try:
            data = orjson.dumps({"version": version, "facts": facts})
        except TypeError:  # a value JSON cannot hold: the facts are derived again next time
            return
        self._write(self._facts_file(key), lambda f: f.write(data))

    def _write(self, path: Path, write: Callable[[BinaryIO], object]) -> bool:
        """`write` to a temporary file renamed to `path`; whether it was."""
        tmp: str | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".write-", suffix=path.suffix)
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.replace(tmp, path)
        except OSError:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            return False
        return True

    def _evict(self) -> None:
        # Other viewers write and evict in the same folder: files may go while we look.
        sizes: list[tuple[float, int, Path]] = []
        for p in self.folder.glob("*.npz"):  # entries of the format before this one
            p.unlink(missing_ok=True)
            p.with_suffix(".facts.json").unlink(missing_ok=True)
        for p in self.folder.glob(f"*{SUFFIX}"):
            if p.name.startswith(".write-"):
                continue  # another process's entry being written
            try:
                st = p.stat()
            except OSError:
                continue
            sizes.append((st.st_mtime, st.st_size, p))
        sizes.sort()
        total = sum(size for _, size, _ in sizes)
        for _, size, old in sizes[:-1]:  # never the one just written
            if total <= self.max_bytes:
                break
            total -= size
            old.unlink(missing_ok=True)
            old.with_suffix(".facts.json").unlink(missing_ok=True)
