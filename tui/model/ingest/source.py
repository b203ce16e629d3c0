"""Reading a trace file's bytes: memory-mapped, or spooled from a stream (gzip detected by its
magic and decompressed into a mapped temporary file)."""

from __future__ import annotations

import mmap
import os
import stat
import sys
import tempfile
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

import msgspec

from ..errors import TraceError

GZIP_MAGIC = b"\x1f\x8b"
GZIP_WBITS = 16 + zlib.MAX_WBITS
UTF8_BOM = b"\xef\xbb\xbf"
NO_GZIP_CONTENT = "corrupt gzip data (no readable content)"
_READ_BLOCK = 1 << 20
DEFAULT_MAX_STREAM_BYTES = 64 << 30

Buffer = bytes | bytearray | mmap.mmap


class Source(msgspec.Struct, frozen=True):
    """The bytes of one trace file, ready to decode.

    Attributes:
        path: the file that was read (inside the folder, when a folder was named).
        data: the decoded-from-gzip or memory-mapped bytes; kept open for lazy args.
        gzip: whether the file was gzip-compressed.
        gzip_truncated: whether the gzip stream ended before its end marker.
        chosen_from: the folder the file was picked from, if any.
    """

    path: str
    data: Buffer
    gzip: bool
    gzip_truncated: bool
    chosen_from: str | None = None
    handle: BinaryIO | None = None

    def safe_length(self) -> int:
        """How much of `data` can be read now. A memory-mapped file that another program
        truncates would kill the process on access past its new end, so reads stay below it."""
        if self.handle is None or not isinstance(self.data, mmap.mmap):
            return len(self.data)
        try:
            return min(os.fstat(self.handle.fileno()).st_size, len(self.data))
        except (OSError, ValueError):
            return 0


# Called with a stream's first block (not gzip) and its name, to stop before spooling what is
# no trace (formats.refuse).
HeadCheck = Callable[[bytes, str], None]


def read_source(
    path: str | os.PathLike[str], chosen_from: str | None = None, check: HeadCheck | None = None
) -> Source:
    """Open the trace file at `path` (or "-" for standard input) for decoding; `chosen_from` is
    the folder it was picked from (formats.resolve). Regular files are memory-mapped read-only;
    pipes, devices and standard input are read as a stream into a temporary file, up to
    `max_stream_bytes()`, once `check` has passed their first block. What the bytes hold is
    for formats.format_for to say."""
    if str(path) == "-":
        return _read_stream(sys.stdin.buffer, "<stdin>", None, check)
    name, folder = str(path), chosen_from
    try:
        f = open(path, "rb")  # noqa: SIM115 (kept open while the trace is in use)
    except FileNotFoundError:
        raise TraceError(name, "no such file or folder") from None
    except IsADirectoryError:
        raise TraceError(name, "is a folder") from None
    except PermissionError:
        raise TraceError(name, "permission denied") from None
    except OSError as e:
        raise TraceError(name, f"cannot read: {e.strerror or e}") from None
    try:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            with f:
                return _read_stream(f, name, folder, check)
        if f.read(2) == GZIP_MAGIC:
            with f:
                f.seek(0)
                data, truncated = _gunzip(f, name)
                return Source(name, data, True, truncated, folder)
        if st.st_size == 0:
            f.close()
            raise TraceError(name, "file is empty")
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return Source(name, mapped, False, False, folder, handle=f)
    except TraceError:
        raise
    except (OSError, ValueError) as e:
        f.close()
        raise TraceError(name, f"cannot read: {getattr(e, 'strerror', None) or e}") from None


def max_stream_bytes() -> int:
    """The most read from a pipe, a device or standard input (TRACE_TUI_MAX_BYTES)."""
    value = os.environ.get("TRACE_TUI_MAX_BYTES")
    try:
        return int(value) if value else DEFAULT_MAX_STREAM_BYTES
    except ValueError:
        return DEFAULT_MAX_STREAM_BYTES


def _read_stream(f: BinaryIO, name: str, folder: str | None, check: HeadCheck | None) -> Source:
    """A stream that cannot be mapped: decompressed when gzip, else checked by its first
    block and spooled to a file."""
    head = f.read(_READ_BLOCK)
    if not head:
        raise TraceError(name, "no data (empty input)")
    if head.startswith(GZIP_MAGIC):
        data, truncated = _gunzip(_Prefixed(head, f), name)
        return Source(name, data, True, truncated, folder)
    if check is not None:
        check(head, name)
    limit = max_stream_bytes()
    spool = tempfile.TemporaryFile(prefix="trace-tui-")  # noqa: SIM115 (mapped, then closed)
    with spool:
        total = 0
        block = head
        while block:
            total += len(block)
            if total > limit:
                raise TraceError(
                    name,
                    f"stopped reading after {limit:,} bytes; set "
                    "TRACE_TUI_MAX_BYTES to read more from a pipe or device",
                )
            spool.write(block)
            block = f.read(_READ_BLOCK)
        spool.flush()
        return Source(
            name, mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ), False, False, folder
        )


class Reader(Protocol):
    """What the gzip reader needs of a file."""

    def read(self, n: int = -1, /) -> bytes: ...

    def seek(self, offset: int, /) -> Any: ...


class _Prefixed:
    """A stream with its first block already read, put back in front."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self.head, self.rest = head, rest

    def read(self, n: int = -1, /) -> bytes:
        if self.head:
            out, self.head = self.head, b""
            return out
        return self.rest.read(n)

    def seek(self, offset: int, /) -> Any:
        raise OSError("a stream cannot be read twice")


def _gunzip(f: Reader, name: str) -> tuple[Buffer, bool]:
    """Decompress a (possibly multi-member, possibly cut-off) gzip stream.

    The output streams into an unlinked temporary file that is then memory-mapped, so a
    multi-GB trace never sits in memory whole (the loader hands decoded pages back as it goes).
    Where no temporary file can be written, it is decompressed into memory instead.

    Returns the bytes and whether the stream stopped before its end marker (a crashed writer).
    """
    try:
        spool: BinaryIO = tempfile.TemporaryFile(prefix="trace-tui-")  # noqa: SIM115 (closed below)
    except OSError:
        return _gunzip_into(f, name, None)
    with spool:
        try:
            _, truncated = _gunzip_into(f, name, spool)
            spool.flush()
            return mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ), truncated
        except OSError:  # the temporary folder is full: decompress into memory
            f.seek(0)
            return _gunzip_into(f, name, None)


def _gunzip_into(f: Reader, name: str, spool: BinaryIO | None) -> tuple[bytearray, bool]:
    """Decompress into `spool` (returning an empty buffer) or, without one, into memory."""
    out = bytearray()
    written = 0
    d = zlib.decompressobj(GZIP_WBITS)

    def emit(data: bytes) -> None:
        nonlocal written
        written += len(data)
        if spool is None:
            out.extend(data)
        else:
            spool.write(data)

    try:
        while block := f.read(_READ_BLOCK):
            while block:
                if d.eof:
                    if not block.startswith(GZIP_MAGIC):
                        return out, False  # padding after the last member is harmless
                    d = zlib.decompressobj(GZIP_WBITS)
                emit(d.decompress(block))
                block = d.unused_data
    except zlib.error as e:
        if not written:
            raise TraceError(name, f"corrupt gzip data ({e})") from None
        return out, True
    if not written:
        raise TraceError(name, NO_GZIP_CONTENT)
    return out, not d.eof
