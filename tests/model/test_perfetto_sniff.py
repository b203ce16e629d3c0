"""A Perfetto protobuf trace is named as such (one line, exit 1), gzipped or not, even when its
first packet's length reads as '{'; a JSON trace that starts with a newline still loads."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from tests.tui.helpers import run
from tui.model.ingest.perfetto_sniff import looks_like_perfetto


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, bytes):
        return _varint(number << 3 | 2) + _varint(len(value)) + value
    return _varint(number << 3) + _varint(value)


def _packet(ts: int, name: bytes) -> bytes:
    """A TracePacket: timestamp (8), trusted_packet_sequence_id (10) and a TrackEvent (11) with
    a type (9) and a name (23)."""
    event = _field(9, 1) + _field(23, name)
    body = _field(8, ts) + _field(10, 1) + _field(11, event)
    return _field(1, body)


def _trace(lengths_to: int | None = None) -> bytes:
    packets = [_packet(1_700_000_000_000_000_000 + k, b"kernel") for k in range(5)]
    if lengths_to is not None:  # pad the first packet to this length with a string field
        first = _field(8, 1) + _field(10, 1)
        pad = lengths_to - len(first) - 2
        packets[0] = _field(1, first + _field(2, b"x" * pad))
    return b"".join(packets)


def test_packets_are_recognised_and_json_is_not():
    assert looks_like_perfetto(_trace())
    braced = _trace(lengths_to=ord("{"))
    assert braced[:2] == b"\n{"  # what a JSON file with a leading newline starts with
    assert looks_like_perfetto(braced)
    assert looks_like_perfetto(_trace()[:40])  # a head cut inside a packet
    doc = json.dumps({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}]})
    for text in ("\n" + doc, "\n\n" + doc, "\n[" + doc[1:-1] + "]", doc):
        assert not looks_like_perfetto(text.encode())
    assert not looks_like_perfetto(b"\n\x00\x00\x00")  # an empty packet, then garbage
    assert not looks_like_perfetto(b"")


@pytest.mark.parametrize("packed", ["plain", "gzip", "braced"])
def test_a_protobuf_file_gets_one_line_and_exit_1(tmp_path, packed):
    data = _trace(lengths_to=ord("{")) if packed == "braced" else _trace()
    path = tmp_path / "run.pftrace"
    path.write_bytes(gzip.compress(data) if packed == "gzip" else data)
    for command in (["info", str(path)], ["summary", str(path)], [str(path)]):
        done = run(*command)
        assert done.returncode == 1
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Perfetto protobuf trace" in lines[0], command
        assert "traceconv json" in lines[0] and "Traceback" not in done.stderr


def test_from_standard_input_too(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tui", "info", "-"], input=_trace(), capture_output=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 1 and b"Perfetto protobuf trace" in done.stderr


def test_a_json_trace_starting_with_a_newline_still_loads(tmp_path):
    path = tmp_path / "t.json"
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1,
               "dur": 5}]  # fmt: skip
    path.write_text("\n" + json.dumps({"traceEvents": events}))
    done = run("info", str(path))
    assert done.returncode == 0, done.stderr


def test_a_folder_of_protobuf_traces_says_so(tmp_path):
    (tmp_path / "rank0.pftrace").write_bytes(_trace())
    done = run("info", str(tmp_path))
    assert done.returncode == 1
    assert "folder holds Perfetto protobuf traces (rank0.pftrace), no JSON" in done.stderr
