"""Reading files: gzip by content, folders, chunk boundaries, damage, and refusing non-traces."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import threading

import pytest

from tests.conftest import DATA
from tui.model.errors import TraceError
from tui.model.ingest import list_traces, load_trace
from tui.model.ingest.chrome_json import chunks as decode


def _events(n: int) -> list[dict]:
    # Names with "}, {" inside strings, and nested args arrays, to tempt a naive splitter.
    return [
        {
            "ph": "X",
            "name": f'op}}, {{"{i}',
            "pid": 1,
            "tid": 1 + i % 3,
            "ts": i * 10.0,
            "dur": 5.0,
            "args": {"shapes": [{"a": [i]}, {"b": i}], "text": "}, {"},
        }
        for i in range(n)
    ]


def test_gzip_is_detected_by_content_not_name(tmp_path):
    plain = (DATA / "nested_cpu.json").read_bytes()
    for name in ("really_gzip.json", "trace.gz", "no_suffix"):
        p = tmp_path / name
        p.write_bytes(gzip.compress(plain))
        trace = load_trace(p)
        assert trace.format.gzip and len(trace.slices) == 8


def test_object_and_array_forms_and_a_byte_order_mark(tmp_path):
    events = _events(5)
    (tmp_path / "a.json").write_text(json.dumps(events))
    (tmp_path / "o.json").write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ns"}))
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(events).encode())
    a, o, bom = (load_trace(tmp_path / n) for n in ("a.json", "o.json", "bom.json"))
    assert (a.format.form, o.format.form) == ("array", "object")
    assert len(a.slices) == len(o.slices) == len(bom.slices) == 5
    assert o.display_time_unit == "ns"


@pytest.mark.parametrize("chunk", [64, 200, 1000, 1 << 20])
def test_chunk_boundaries_never_lose_or_split_events(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(decode, "CHUNK_BYTES", chunk)
    events = _events(300)
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": events}, indent=1))
    trace = load_trace(p)
    assert len(trace.slices) == 300 and not trace.skipped
    names = sorted(trace.slice_name(r) for r in range(len(trace.slices)))
    assert names == sorted(e["name"] for e in events)
    row = next(r for r in range(300) if trace.slice_name(r) == 'op}, {"17')
    assert trace.args(row) == events[17]["args"]


@pytest.mark.parametrize("chunk", [100, 1 << 20])
def test_a_damaged_event_costs_one_event(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(decode, "CHUNK_BYTES", chunk)
    lines = [json.dumps(e) for e in _events(40)]
    lines[17] = lines[17].replace('"ts"', '"ts" "oops"', 1)
    p = tmp_path / "t.json"
    p.write_text("[\n" + ",\n".join(lines) + "\n]")
    trace = load_trace(p)
    assert len(trace.slices) == 39
    assert trace.skipped == {"malformed JSON": 1}
    assert not trace.format.truncated


def test_events_of_the_wrong_types_are_read_leniently(tmp_path):
    events = [
        *_events(4),
        {"ph": "X", "name": 42, "pid": [1], "tid": {"a": 1}, "ts": "12.5", "dur": 1},
        {"ph": 7, "ts": 1},
        "not an event",
        {
            "ph": "X",
            "name": "ok",
            "pid": 1,
            "tid": 1,
            "ts": 1,
            "dur": 1,
            "args": {"big": 2**64 + 5, "correlation": 2**70},
        },
    ]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(events))
    trace = load_trace(p)
    assert len(trace.slices) == 6
    assert trace.skipped == {"missing or non-string ph": 2}
    row = next(r for r in range(6) if trace.slice_name(r) == "ok")
    assert trace.args(row)["big"] == 2**64 + 5


def test_nan_and_infinity_literals_do_not_lose_the_chunk(tmp_path):
    text = (
        '[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 1, '
        '"args": {"v": NaN}},\n {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, '
        '"dur": Infinity}]'
    )
    p = tmp_path / "t.json"
    p.write_text(text)
    trace = load_trace(p)
    assert [trace.slice_name(r) for r in range(len(trace.slices))] == ["a", "b"]
    assert trace.adjusted == {"X without dur, drawn with zero length": 1}


def test_u64_args_keep_their_exact_value(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(
        '[{"ph": "X", "name": "nccl", "pid": 1, "tid": 1, "ts": 0, "dur": 1, '
        '"args": {"Comms Id": 10159970886766084423}}]'
    )
    assert load_trace(p).args(0) == {"Comms Id": 10159970886766084423}


def test_folder_opens_the_newest_trace_and_says_which(tmp_path):
    older = tmp_path / "w0.1.pt.trace.json"
    newer = tmp_path / "w0.2.pt.trace.json.gz"
    older.write_bytes((DATA / "nested_cpu.json").read_bytes())
    newer.write_bytes(gzip.compress((DATA / "gpu_streams.json").read_bytes()))
    os.utime(older, (1_000, 1_000))
    (tmp_path / "notes.txt").write_text("not a trace")
    assert list_traces(tmp_path) == [newer, older]
    trace = load_trace(tmp_path)
    assert trace.path == str(newer)
    assert trace.format.chosen_from == str(tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "file is empty"),
        (b"   \n\t", "empty or only whitespace"),
        (b"\x00\x01\x02\xff binary", "binary data"),
        (b"hello, world", "not JSON"),
        (b'{"spans": []}', "no traceEvents list"),
        (b'{"traceEvents": {"ph": "X"}}', "traceEvents is not a list"),
        (b"[1, 2, 3]", "no item of the event array is a trace event"),
        (b"\x1f\x8b\x08\x00garbage", "corrupt gzip"),
    ],
)
def test_bad_input_gives_one_clear_error(tmp_path, content, message):
    p = tmp_path / "bad.json"
    p.write_bytes(content)
    with pytest.raises(TraceError, match=message) as info:
        load_trace(p)
    assert str(info.value).startswith(str(p))
    assert "\n" not in str(info.value)


def test_missing_paths_and_empty_folders(tmp_path):
    with pytest.raises(TraceError, match="no such file"):
        load_trace(tmp_path / "nope.json")
    with pytest.raises(TraceError, match=r"folder holds no \.json, \.json\.gz or \.gz files"):
        load_trace(tmp_path)


def test_an_empty_event_list_is_an_empty_trace(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"traceEvents": []}')
    trace = load_trace(p)
    assert len(trace.slices) == 0 and trace.lanes == [] and trace.span_ns == 0


def test_loading_never_writes_the_trace(tmp_path):
    p = tmp_path / "t.json"
    p.write_bytes((DATA / "gpu_streams.json").read_bytes())
    before = (p.read_bytes(), p.stat().st_mtime_ns)
    load_trace(p).args(0)
    assert (p.read_bytes(), p.stat().st_mtime_ns) == before


def test_a_file_that_shrinks_while_loading_stops_at_its_new_end(tmp_path, monkeypatch):
    monkeypatch.setattr(decode, "CHUNK_BYTES", 200)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(_events(100)))
    full = p.stat().st_size
    calls = []

    def shrinking(self):
        calls.append(1)
        return full if len(calls) < 3 else full // 2  # another program truncates it

    monkeypatch.setattr("tui.model.ingest.source.Source.safe_length", shrinking)
    trace = load_trace(p)
    assert 0 < len(trace.slices) < 100
    assert trace.format.truncated
    assert trace.adjusted["file shrank while being read: what was left is shown"] == 1


def test_a_file_that_grows_while_open_keeps_what_it_held(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps(_events(10)))
    trace = load_trace(p)
    with open(p, "a") as f:
        f.write(" " * 100_000)  # the writer goes on
    assert len(trace.slices) == 10 and trace.args(0) == _events(10)[0]["args"]


def test_non_regular_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(
        target=lambda: fifo.write_bytes((DATA / "nested_cpu.json").read_bytes())
    )
    writer.start()
    trace = load_trace(fifo)
    writer.join(10)
    assert len(trace.slices) == 8
    with pytest.raises(TraceError, match="binary data"):
        load_trace("/dev/zero")
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "gone.json")
    with pytest.raises(TraceError, match="broken symbolic link"):
        load_trace(link)
    locked = tmp_path / "locked.json"
    locked.write_text("[]")
    locked.chmod(0)
    if os.geteuid() != 0:  # root reads anything
        with pytest.raises(TraceError, match="permission denied"):
            load_trace(locked)


def test_streams_stop_at_the_byte_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACE_TUI_MAX_BYTES", "1000")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write():
        with contextlib.suppress(BrokenPipeError):  # the reader stops at the limit
            fifo.write_bytes(json.dumps(_events(200)).encode())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    with pytest.raises(TraceError, match="TRACE_TUI_MAX_BYTES"):
        load_trace(fifo)
    writer.join(10)
