"""Telling a Perfetto protobuf trace (`.pftrace`: torch's `cupti_monitor` backend, AMD's
rocprofv3) from a JSON one by its first bytes, so that it gets one line saying what it is and how
to get JSON, not a JSON parse error. No reader yet: formats.py registers the format with an
importer that raises that line, until a protobuf importer takes its place there.

A `Trace` message is a run of `packet` fields (field 1, length-delimited: tag byte 0x0a, a
varint length, the TracePacket). A JSON file may begin with a newline (0x0a) too, and its next
byte ('{' is 123) reads as a length; so the packets are parsed through, field by field, and text
that is clean UTF-8 JSON is never taken for protobuf.
"""

from __future__ import annotations

PACKET_TAG = 0x0A  # field 1 (`packet`), wire type 2
_WIRE_TYPES = {0, 1, 2, 5}  # varint, 64-bit, length-delimited, 32-bit
PACKETS_CHECKED = 3  # whole packets that must parse (fewer when the head ends first)

HOW = (
    "trace-tui reads JSON traces; export one with a .json name (torch: "
    "prof.export_chrome_trace('trace.json')), or convert with Perfetto's "
    "`traceconv json FILE trace.json`"
)
MESSAGE = f"a Perfetto protobuf trace (.pftrace), not Chrome JSON: {HOW}"
SUFFIXES = (".pftrace", ".pftrace.gz", ".perfetto-trace")


def looks_like_perfetto(head: bytes) -> bool:
    """Whether `head` (a file's first bytes, decompressed) starts a protobuf `Trace`."""
    if not head or head[0] != PACKET_TAG or _json_text(head):
        return False
    at, whole = 0, 0
    while at < len(head) and whole < PACKETS_CHECKED:
        if head[at] != PACKET_TAG:
            return False
        length, at = _varint(head, at + 1)
        if length is None or length == 0:
            return False
        end = at + length
        if end > len(head):  # the head ends inside this packet: what is there must parse
            return whole > 0 or _fields(head, at, len(head), partial=True)
        if not _fields(head, at, end, partial=False):
            return False
        at, whole = end, whole + 1
    return whole > 0


def _json_text(head: bytes) -> bool:
    """Clean UTF-8 whose first character after white space opens JSON."""
    start = head.lstrip(b" \t\r\n")
    if start[:1] not in (b"{", b"["):
        return False
    try:
        text = head[:4096].decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < 4092:  # not just a character cut at the end of the head
            return False
        text = head[: e.start].decode("utf-8")
    return not any(ord(c) < 32 and c not in "\t\r\n" for c in text)


def _fields(data: bytes, at: int, end: int, partial: bool) -> bool:
    """Whether data[at:end] is a run of well-formed protobuf fields (`partial`: the last may be
    cut off at `end`)."""
    count = 0
    while at < end:
        tag, at = _varint(data, at, end)
        if tag is None:
            return partial and count > 0
        field, wire = tag >> 3, tag & 7
        if field == 0 or wire not in _WIRE_TYPES:
            return False
        if wire == 0:
            value, at = _varint(data, at, end)
            if value is None:
                return partial and count > 0
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        else:
            length, at = _varint(data, at, end)
            if length is None:
                return partial and count > 0
            at += length
        count += 1
        if at > end:
            return partial
    return count > 0


def _varint(data: bytes, at: int, end: int | None = None) -> tuple[int | None, int]:
    """The varint at `at` and where it ends; None when it runs past `end` or 10 bytes."""
    stop = min(len(data) if end is None else end, at + 10)
    value, shift = 0, 0
    while at < stop:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7
    return None, at
