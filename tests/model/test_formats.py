"""The format door: one guess from a fixed head says which registered format reads a file, or
why none does; every path in (a file, a folder member, a stream, the CLI's early check, a rank
set) asks it and nothing else sniffs."""

from __future__ import annotations

import gzip
import json
import os
import threading

import pytest

from tests.conftest import DATA
from tests.tui.helpers import run
from tui.model.errors import TraceError
from tui.model.ingest import formats, load_trace
from tui.model.ingest.formats import CHROME_JSON, PERFETTO_PROTOBUF, check_start, guess
from tui.model.ingest.rank_folder import rank_files

EVENT = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5}
PACKETS = b"\n\x06\x40\x01\x50\x01\x58\x02" * 3  # three TracePackets of three varint fields each


@pytest.mark.parametrize(
    ("head", "fmt", "events"),
    [
        (json.dumps({"traceEvents": [EVENT]}).encode(), CHROME_JSON, True),
        (b"\xef\xbb\xbf  \n" + json.dumps([EVENT]).encode(), CHROME_JSON, True),
        (b'{"deviceProperties": []', CHROME_JSON, False),  # JSON whose events are not in sight
        (b"[1, 2", CHROME_JSON, False),
        (b" \n\t", CHROME_JSON, False),  # only white space: the importer says so
        (PACKETS, PERFETTO_PROTOBUF, False),
    ],
)
def test_a_head_names_its_format(head, fmt, events):
    found = guess(head)
    assert (found.format, found.events, found.why) == (fmt, events, "")


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (b"", "file is empty"),
        (b"\xff\xfe{\x00", "UTF-16"),
        (b"\x00\x01\x02\xff binary", "binary data"),
        (b"hello, world", "not JSON"),
    ],
)
def test_a_head_no_format_reads_says_why_in_one_line(head, why):
    found = guess(head)
    assert found.format is None and why in found.why and "\n" not in found.why


def test_a_known_format_not_read_is_registered_and_its_importer_refuses(tmp_path):
    path = tmp_path / "t.pftrace"
    path.write_bytes(gzip.compress(PACKETS))
    assert PERFETTO_PROTOBUF.refusal is not None
    for attempt in (lambda: check_start(path), lambda: load_trace(path)):
        with pytest.raises(TraceError) as info:
            attempt()
        assert str(info.value) == f"{path}: {PERFETTO_PROTOBUF.refusal}"


def test_the_head_of_damaged_gzip_is_what_decompresses_before_the_damage(tmp_path):
    good = gzip.compress(json.dumps({"traceEvents": [EVENT] * 5000}).encode())
    path = tmp_path / "t.json.gz"
    path.write_bytes(good[: len(good) // 2] + b"\x00" * 64 + good[len(good) // 2 :])
    head = formats.read_head(path, str(path))
    assert head.startswith(b'{"traceEvents"')
    check_start(path)  # the loader salvages what it can: no refusal before it tries
    (tmp_path / "empty.json.gz").write_bytes(gzip.compress(b"")[:10])
    with pytest.raises(TraceError, match="corrupt gzip data"):
        check_start(tmp_path / "empty.json.gz")


def test_every_way_in_asks_the_door(tmp_path, monkeypatch):
    """With the door refusing everything, no path reads a trace by sniffing on its own."""
    trace = tmp_path / "rank0.json"
    trace.write_text(json.dumps({"traceEvents": [EVENT]}))
    (tmp_path / "rank1.json").write_text(trace.read_text())
    asked = []

    def refusing(head: bytes) -> formats.Guess:
        asked.append(head[:1])
        return formats.Guess(None, "refused by the door")

    monkeypatch.setattr(formats, "guess", refusing)
    for attempt in (lambda: check_start(trace), lambda: load_trace(trace)):
        with pytest.raises(TraceError, match="refused by the door"):
            attempt()
    assert formats.list_traces(tmp_path) == [] and rank_files(tmp_path) is None
    with pytest.raises(TraceError, match="folder holds no trace"):
        load_trace(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(trace.read_bytes()))
    writer.start()
    with pytest.raises(TraceError, match="refused by the door"):
        load_trace(fifo)
    writer.join(10)
    assert len(asked) >= 7


def test_the_cli_checks_and_lists_through_the_door(tmp_path, monkeypatch):
    (tmp_path / "t.json").write_bytes((DATA / "nested_cpu.json").read_bytes())
    assert run("--list", str(tmp_path)).returncode == 0
    monkeypatch.setattr(formats, "guess", lambda head: formats.Guess(None, "refused"))
    listed = run("--list", str(tmp_path))
    assert listed.returncode == 1 and "folder holds no trace" in listed.stderr
    info = run("info", str(tmp_path / "t.json"))
    assert info.returncode == 1 and info.stderr.strip().endswith("t.json: refused")
