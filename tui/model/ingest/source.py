"""Finding the trace file a path names, and reading its bytes (gzip detected by content)."""

from __future__ import annotations

import mmap
import os
import stat
import sys
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from ..errors import TraceError
from .perfetto_sniff import HOW, looks_like_perfetto
from .perfetto_sniff import MESSAGE as PERFETTO_MESSAGE
from .perfetto_sniff import SUFFIXES as PERFETTO_SUFFIXES

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
# The files of a folder that may be traces (tensorboard_trace_handler writes *.pt.trace.json
# and, with use_gzip, *.pt.trace.json.gz; other tools and users name them freely).
_FOLDER_SUFFIXES = (".json", ".json.gz", ".gz")
# How much of a file's start is read to tell a trace from other JSON: Kineto writes its device
# properties, and TraceLens a top-level metadata object, before the events.
_SNIFF_BYTES = 1 << 20
_READ_BLOCK = 1 << 20
DEFAULT_MAX_STREAM_BYTES = 64 << 30
_GZIP_WBITS = 16 + zlib.MAX_WBITS
_NO_GZIP_CONTENT = "corrupt gzip data (no readable content)"

Buffer = bytes | bytearray | mmap.mmap


@dataclass(frozen=True)
class Source:
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


def list_traces(folder: str | os.PathLike[str]) -> list[Path]:
    """The trace files in a folder, newest first."""
    return scan_folder(folder)[0]


def scan_folder(folder: str | os.PathLike[str]) -> tuple[list[Path], list[Path]]:
    """(traces newest first, the other .json/.json.gz/.gz files by name) of a folder."""
    candidates = [
        p for p in Path(folder).iterdir() if p.name.endswith(_FOLDER_SUFFIXES) and p.is_file()
    ]
    traces: list[Path] = []
    others: list[Path] = []
    for p in candidates:
        (traces if looks_like_trace(p) else others).append(p)
    traces.sort(key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
    return traces, sorted(others)


def looks_like_trace(path: Path) -> bool:
    """Whether a file's start (decompressed when gzip) is Chrome trace JSON: an object whose
    `traceEvents` key appears early, or an array of events with a `ph`."""
    try:
        with open(path, "rb") as f:
            head = f.read(_SNIFF_BYTES)
        if head.startswith(GZIP_MAGIC):
            head = zlib.decompressobj(_GZIP_WBITS).decompress(head, _SNIFF_BYTES)
    except (OSError, zlib.error):
        return False
    start = (head[3:] if head.startswith(UTF8_BOM) else head).lstrip(b" \t\r\n")
    if start.startswith(b"{"):
        return b'"traceEvents"' in start
    return start.startswith(b"[") and b'"ph"' in start


def resolve(path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """The file to open for `path`, and the folder it was chosen from when `path` is a folder."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        if p.is_symlink():
            raise TraceError(str(path), f"broken symbolic link (to {os.readlink(p)})") from None
        raise TraceError(str(path), "no such file or folder") from None
    except OSError as e:
        raise TraceError(str(path), f"cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        traces, others = scan_folder(p)
        if not traces:
            protobuf = sorted(q.name for q in p.iterdir() if q.name.endswith(PERFETTO_SUFFIXES))
            if protobuf:
                names = ", ".join(protobuf[:3]) + (" ..." if len(protobuf) > 3 else "")
                raise TraceError(
                    str(path), f"folder holds Perfetto protobuf traces ({names}), no JSON: {HOW}"
                )
            raise TraceError(str(path), no_traces_reason(others))
        return traces[0], str(p)
    return p, None


def no_traces_reason(others: list[Path]) -> str:
    if not others:
        return "folder holds no .json, .json.gz or .gz files"
    names = ", ".join(p.name for p in others[:3]) + (" ..." if len(others) > 3 else "")
    return f"folder holds no trace ({len(others)} JSON or gzip files that are not traces: {names})"


def check_start(path: str | os.PathLike[str]) -> None:
    """Cheap checks before anything slow: the path resolves, and its text starts like JSON.

    Reads at most the first block (decompressed when gzip).

    Raises:
        TraceError: as load_trace would for a missing, empty, binary or non-JSON file.
    """
    if str(path) == "-":
        return  # standard input is checked as it is read
    file, _ = resolve(path)
    name = str(file)
    try:
        if not stat.S_ISREG(os.stat(file).st_mode):
            return  # a pipe or a device: reading it here would eat what the loader needs
        with open(file, "rb") as f:
            head = f.read(_READ_BLOCK)
    except OSError as e:
        raise TraceError(name, f"cannot read: {e.strerror or e}") from None
    if head.startswith(GZIP_MAGIC):
        try:
            head = zlib.decompressobj(_GZIP_WBITS).decompress(head, 4096)
        except zlib.error as e:
            raise TraceError(name, f"corrupt gzip data ({e})") from None
        if not head:
            raise TraceError(name, _NO_GZIP_CONTENT)
    if not head:
        raise TraceError(name, "file is empty")
    if looks_like_perfetto(head):
        raise TraceError(name, PERFETTO_MESSAGE)
    start = head[3:] if head.startswith(UTF8_BOM) else head
    start = start.lstrip(b" \t\r\n")
    if start[:1] not in (b"{", b"[", b""):
        raise TraceError(name, not_json_reason(start))


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def not_json_reason(head: bytes) -> str:
    """Why text that does not start with '{' or '[' is no trace."""
    if head.startswith(_UTF16_BOMS):
        return (
            "not a trace: the file is UTF-16 text, and traces are UTF-8 JSON "
            "(convert it: iconv -f UTF-16 -t UTF-8)"
        )
    if b"\x00" in head[:64] or head[:64].decode("utf-8", "replace").count("\ufffd") > 2:
        return "not a trace: binary data, not JSON text"
    return "not a trace: not JSON (a trace starts with '{' or '[')"


def read_source(path: str | os.PathLike[str]) -> Source:
    """Open the trace at `path` (a file, a tensorboard_trace_handler folder, or "-" for standard
    input) for decoding. Regular files are memory-mapped read-only; pipes, devices and standard
    input are read as a stream into a temporary file, up to `max_stream_bytes()`."""
    if str(path) == "-":
        return _read_stream(sys.stdin.buffer, "<stdin>", None)
    file, folder = resolve(path)
    name = str(file)
    try:
        f = open(file, "rb")  # noqa: SIM115 (kept open while the trace is in use)
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
                return _read_stream(f, name, folder)
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


def _read_stream(f: BinaryIO, name: str, folder: str | None) -> Source:
    """A stream that cannot be mapped: checked by its first bytes, then spooled to a file."""
    head = f.read(_READ_BLOCK)
    if not head:
        raise TraceError(name, "no data (empty input)")
    if head.startswith(GZIP_MAGIC):
        data, truncated = _gunzip(_Prefixed(head, f), name)
        return Source(name, data, True, truncated, folder)
    if looks_like_perfetto(head):
        raise TraceError(name, PERFETTO_MESSAGE)
    start = head[3:] if head.startswith(UTF8_BOM) else head
    if start.lstrip(b" \t\r\n")[:1] not in (b"{", b"[", b""):
        raise TraceError(name, not_json_reason(start))
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
    d = zlib.decompressobj(_GZIP_WBITS)

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
                    d = zlib.decompressobj(_GZIP_WBITS)
                emit(d.decompress(block))
                block = d.unused_data
    except zlib.error as e:
        if not written:
            raise TraceError(name, f"corrupt gzip data ({e})") from None
        return out, True
    if not written:
        raise TraceError(name, _NO_GZIP_CONTENT)
    return out, not d.eof
