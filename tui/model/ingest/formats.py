"""The one door: what a path, a stream or a folder member holds, guessed once from its head.

As Perfetto's `GuessTraceType(head)`, one fixed look-ahead of a file's start (decompressed when
gzip) says which registered input format reads it, or, in one line, why none does. A known
format that is not read yet (Perfetto protobuf) is registered too: its importer raises the line
saying what the file is and how to get JSON. Every caller asks here; nothing else sniffs.

A new format is a sub-package beside `chrome_json/` with a `read(source, progress, workers) ->
Imported` that fills the intermediate and an args reader; it is registered here, as one
`InputFormat` in FORMATS, and nowhere else.
"""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Callable
from pathlib import Path

import msgspec
import numpy as np
import numpy.typing as npt

from ..errors import TraceError
from ..trace import ArgsReader
from . import chrome_json
from .intermediate import Imported, Progress
from .perfetto_sniff import HOW, looks_like_perfetto
from .perfetto_sniff import MESSAGE as PERFETTO_MESSAGE
from .perfetto_sniff import SUFFIXES as PERFETTO_SUFFIXES
from .source import GZIP_MAGIC, GZIP_WBITS, NO_GZIP_CONTENT, UTF8_BOM, Source

# How much of a file's start the guess reads: Kineto writes its device properties, and
# TraceLens a top-level metadata object, before the events, and a folder member counts as a
# trace only when its events show in the head.
LOOKAHEAD = 1 << 20
_INFLATE_BLOCK = 64 << 10
# What a folder member's head is kept for after the guess (a rank's distributedInfo).
MEMBER_HEAD_BYTES = 1 << 16
# The files of a folder that may be traces (tensorboard_trace_handler writes *.pt.trace.json
# and, with use_gzip, *.pt.trace.json.gz; other tools and users name them freely).
_FOLDER_SUFFIXES = (".json", ".json.gz", ".gz")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

# (source, progress, workers): workers is how many processes may decode one file together.
Importer = Callable[[Source, Progress | None, int], Imported]
# How a format's args reader is made again from the arrays the model cache kept.
ArgsMaker = Callable[[str, dict[str, npt.NDArray[np.int64]]], ArgsReader]


class InputFormat(msgspec.Struct, frozen=True):
    """A registered input format.

    Attributes:
        claims: of a head (decompressed, never empty): None when it is not this format's,
            else whether trace events show in it (a folder member must show them).
        read: its importer.
        args_reader: how its args reader is made again after a cache hit.
        parallel_from: the size from which a file is worth decoding on several cores (None:
            never).
        refusal: for a known format not read yet, the one line its importer raises.
    """

    name: str
    claims: Callable[[bytes], bool | None]
    read: Importer
    args_reader: ArgsMaker | None = None
    parallel_from: int | None = None
    refusal: str | None = None


def _protobuf(head: bytes) -> bool | None:
    return False if looks_like_perfetto(head) else None


def _refuse_protobuf(source: Source, progress: Progress | None, workers: int) -> Imported:
    raise TraceError(source.path, PERFETTO_MESSAGE)


def _json(head: bytes) -> bool | None:
    """JSON, from its first character (whether it is a trace, the importer says, with the words
    for what it found instead); only white space is left to the importer to say so too."""
    start = (head[3:] if head.startswith(UTF8_BOM) else head).lstrip(b" \t\r\n")
    if start.startswith(b"{"):
        return b'"traceEvents"' in start
    if start.startswith(b"["):
        return b'"ph"' in start
    return False if not start else None


CHROME_JSON = InputFormat(
    chrome_json.NAME,
    _json,
    chrome_json.read,
    chrome_json.JsonArgs.from_arrays,
    chrome_json.PARALLEL_FROM_BYTES,
)
PERFETTO_PROTOBUF = InputFormat(
    "perfetto_protobuf", _protobuf, _refuse_protobuf, refusal=PERFETTO_MESSAGE
)
# In the order they are asked: protobuf first, since its first packet may look like a newline
# and a '{' (looks_like_perfetto parses the packets through, so JSON is never taken for it).
FORMATS = (PERFETTO_PROTOBUF, CHROME_JSON)
ARGS_READERS: dict[str, ArgsMaker] = {f.name: f.args_reader for f in FORMATS if f.args_reader}


class Guess(msgspec.Struct, frozen=True):
    """What a head says: the format that reads it, or (format None) why no importer does."""

    format: InputFormat | None
    why: str = ""
    events: bool = False  # trace events show in the head (what a folder member needs)


def guess(head: bytes) -> Guess:
    """The format of a file whose first bytes (decompressed) are `head`."""
    if not head:
        return Guess(None, "file is empty")
    for fmt in FORMATS:
        events = fmt.claims(head)
        if events is not None:
            return Guess(fmt, events=events)
    start = (head[3:] if head.startswith(UTF8_BOM) else head).lstrip(b" \t\r\n")
    return Guess(None, _not_json_reason(start))


def _not_json_reason(head: bytes) -> str:
    """Why text that does not start with '{' or '[' is no trace."""
    if head.startswith(_UTF16_BOMS):
        return (
            "not a trace: the file is UTF-16 text, and traces are UTF-8 JSON "
            "(convert it: iconv -f UTF-16 -t UTF-8)"
        )
    if b"\x00" in head[:64] or head[:64].decode("utf-8", "replace").count("\ufffd") > 2:
        return "not a trace: binary data, not JSON text"
    return "not a trace: not JSON (a trace starts with '{' or '[')"


def format_for(source: Source) -> InputFormat:
    """The format of the bytes of `source`, whose importer reads them.

    Raises:
        TraceError: no registered format reads them (the one-line reason).
    """
    found = guess(bytes(source.data[:LOOKAHEAD]))
    if found.format is None:
        raise TraceError(source.path, found.why)
    return found.format


def read_head(path: str | os.PathLike[str], name: str) -> bytes:
    """The first LOOKAHEAD bytes of a file, decompressed when gzip. Damage after the first
    bytes is left to the loader, which salvages what it can.

    Raises:
        OSError: the file cannot be read.
        TraceError: gzip data of which nothing decompresses.
    """
    with open(path, "rb") as f:
        head = f.read(LOOKAHEAD)
    if not head.startswith(GZIP_MAGIC):
        return head
    d = zlib.decompressobj(GZIP_WBITS)
    out = bytearray()
    for at in range(0, len(head), _INFLATE_BLOCK):
        try:
            out += d.decompress(head[at : at + _INFLATE_BLOCK], LOOKAHEAD - len(out))
        except zlib.error as e:
            if not out:
                raise TraceError(name, f"corrupt gzip data ({e})") from None
            break
        if len(out) >= LOOKAHEAD or d.eof:
            break
    if not out:
        raise TraceError(name, NO_GZIP_CONTENT)
    return bytes(out)


def check_start(path: str | os.PathLike[str]) -> None:
    """Cheap checks before anything slow: the path resolves, and its head is a format read here.

    Raises:
        TraceError: as load_trace would for a missing, empty, binary, protobuf or non-JSON file.
    """
    if str(path) == "-":
        return  # standard input is guessed once it is read
    file, _ = resolve(path)
    name = str(file)
    try:
        if not stat.S_ISREG(os.stat(file).st_mode):
            return  # a pipe or a device: reading it here would eat what the loader needs
        head = read_head(file, name)
    except OSError as e:
        raise TraceError(name, f"cannot read: {e.strerror or e}") from None
    refuse(head, name)


def refuse(head: bytes, name: str) -> None:
    """Stop at once on a head that no importer reads (or that a known format not read yet
    begins): the checks before a load, and a stream's first block before it is spooled.

    Raises:
        TraceError: the one-line refusal.
    """
    found = guess(head)
    if found.format is None:
        raise TraceError(name, found.why)
    if found.format.refusal is not None:
        raise TraceError(name, found.format.refusal)


class Member(msgspec.Struct, frozen=True):
    """A folder's file that is a trace, with the start of its head (what else it tells)."""

    path: Path
    head: bytes


def folder_members(folder: str | os.PathLike[str]) -> tuple[list[Member], list[Path]]:
    """(the traces, newest first; the other .json/.json.gz/.gz files by name) of a folder,
    each file's head read and guessed once."""
    traces: list[tuple[float, Member]] = []
    others: list[Path] = []
    for p in Path(folder).iterdir():
        if not (p.name.endswith(_FOLDER_SUFFIXES) and p.is_file()):
            continue
        try:
            head = read_head(p, str(p))
            mtime = p.stat().st_mtime
        except (OSError, TraceError):
            others.append(p)
            continue
        found = guess(head)
        if found.format is CHROME_JSON and found.events:
            traces.append((mtime, Member(p, head[:MEMBER_HEAD_BYTES])))
        else:
            others.append(p)
    traces.sort(key=lambda t: (t[0], t[1].path.name), reverse=True)
    return [m for _, m in traces], sorted(others)


def scan_folder(folder: str | os.PathLike[str]) -> tuple[list[Path], list[Path]]:
    """(traces newest first, the other .json/.json.gz/.gz files by name) of a folder."""
    traces, others = folder_members(folder)
    return [m.path for m in traces], others


def list_traces(folder: str | os.PathLike[str]) -> list[Path]:
    """The trace files in a folder, newest first."""
    return scan_folder(folder)[0]


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
