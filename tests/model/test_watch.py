"""A folder a running job writes traces into: each new trace once, once complete, never one half
written (plain or gzip)."""

from __future__ import annotations

import gzip
import os
import shutil

from tests.conftest import DATA
from tui.model.ingest.watch import Watch, complete

TRACE = DATA / "gpu_streams.json"


def _touch_later(path, seconds=5):
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 10**9))


def test_only_a_trace_that_held_still_and_reads_to_its_end_is_new(tmp_path):
    shutil.copy(TRACE, tmp_path / "old.json")
    watch = Watch(tmp_path)
    assert watch.newest == tmp_path / "old.json" and watch.poll() == []
    whole = TRACE.read_bytes()
    growing = tmp_path / "new.json"
    growing.write_bytes(whole[: len(whole) // 2])
    assert watch.poll() == []  # first seen
    assert watch.poll() == []  # held still, but cut: not taken
    assert watch.poll() == []  # and not decoded again while it stays so
    growing.write_bytes(whole)
    _touch_later(growing)
    assert watch.poll() == []  # grew: look again next time
    assert watch.poll() == [growing]
    assert watch.poll() == []  # each once


def test_a_gzip_trace_is_new_once_its_stream_ends(tmp_path):
    watch = Watch(tmp_path)
    assert watch.newest is None
    packed = gzip.compress(TRACE.read_bytes())
    path = tmp_path / "run.pt.trace.json.gz"
    path.write_bytes(packed[:-20])  # the last block and the trailer not written yet
    assert not complete(path)
    assert watch.poll() == [] and watch.poll() == []
    path.write_bytes(packed)
    _touch_later(path)
    assert complete(path)
    watch.poll()
    assert watch.poll() == [path]


def test_new_traces_come_oldest_first_and_other_json_is_not_one(tmp_path):
    watch = Watch(tmp_path)
    for i, name in enumerate(("b.json", "a.json")):
        shutil.copy(TRACE, tmp_path / name)
        _touch_later(tmp_path / name, i + 1)
    (tmp_path / "config.json").write_text('{"lr": 0.1}')
    watch.poll()
    assert watch.poll() == [tmp_path / "b.json", tmp_path / "a.json"]


def test_a_trace_being_written_as_the_watch_starts_is_new_not_the_newest(tmp_path):
    shutil.copy(TRACE, tmp_path / "done.json")
    writing = tmp_path / "writing.json"
    writing.write_bytes(TRACE.read_bytes()[:500])
    _touch_later(writing)
    watch = Watch(tmp_path)
    assert watch.newest == tmp_path / "done.json"
    assert watch.poll() == [] and watch.poll() == []  # held still, yet cut: not said
    writing.write_bytes(TRACE.read_bytes())
    _touch_later(writing, 9)
    watch.poll()
    assert watch.poll() == [writing]
