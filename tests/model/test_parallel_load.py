"""One big file decoded across processes: the model is the one a single pass gives, exactly, and
anything only the single pass handles (damage, a cut inside a value, a truncated file) is read
by it. Chunks are made small so that small files are cut into many runs."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import re

import msgspec
import numpy as np
import pytest

from tests.bench.gen_trace import generate
from tui.model.errors import TraceError
from tui.model.ingest import load_trace
from tui.model.ingest.chrome_json import chunks, parallel
from tui.model.ingest.chrome_json.locate import locate_events
from tui.model.ingest.chrome_json.parallel import read_parallel
from tui.model.ingest.intermediate import Collected
from tui.model.ingest.source import read_source

CHUNK = 16 << 10
EPOCH_US = 1_700_000_000_000_000


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_BYTES", CHUNK)


def assert_same(a, b, where="trace"):
    """Every field of two models equal: arrays by value and dtype, down through the records
    (msgspec structs, and the dataclass Trace)."""
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b), where
    elif isinstance(a, msgspec.Struct) or dataclasses.is_dataclass(a):
        names = a.__struct_fields__ if isinstance(a, msgspec.Struct) else a.__dataclass_fields__
        for name in names:
            assert_same(getattr(a, name), getattr(b, name), f"{where}.{name}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{k}]")
    elif hasattr(a, "arrays"):  # the args reader: the same byte ranges
        assert_same(list(a.arrays().values()), list(b.arrays().values()), where)
    else:
        assert a == b, where


def parallel_ran(path, workers=2):
    source = read_source(path)
    return read_parallel(source, locate_events(source.data, source.path), workers, None)


def both(path, workers=3):
    one, many = load_trace(path, workers=1), load_trace(path, workers=workers)
    assert_same(one, many)
    for event in range(0, int(one.slices.event.max()) + 1, 997):
        assert one.args_of_event(event) == many.args_of_event(event)
    return one


@pytest.fixture
def kineto(tmp_path):
    path = tmp_path / "kineto.json"
    with open(path, "w") as f:
        generate(6000, f)
    return path


def test_a_kineto_trace_is_the_same_model_from_one_process_or_several(kineto):
    assert os.path.getsize(kineto) > 40 * CHUNK  # many runs
    assert parallel_ran(kineto) is not None
    trace = both(kineto, 2)
    assert len(trace.slices) > 3000 and len(trace.launches.src) > 500
    both(kineto, 4)


def test_epoch_timestamps_keep_the_base_the_first_chunk_fixed(tmp_path, kineto):
    epoch = tmp_path / "epoch.json"
    text = kineto.read_text().replace('"baseTimeNanoseconds"', '"was"')
    epoch.write_text(re.sub(r'"ts": (\d+)', lambda m: f'"ts": {int(m[1]) + EPOCH_US}', text))
    assert parallel_ran(epoch) is not None
    trace = both(epoch)
    assert trace.base_time_ns is not None and trace.base_time_ns > 1.7e18


def _mixed_events(n):
    """Every phase the importer keeps, interleaved, with string pids and bind-id flows."""
    for k in range(n):
        t = k * 10.0
        yield from (
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": k % 3,
             "args": {"name": f"t{k % 3}"}},
            {"ph": "X", "name": f"op{k % 50}", "cat": "cpu_op", "pid": 1, "tid": k % 3, "ts": t,
             "dur": 8, "bind_id": k, "flow_out": True},
            {"ph": "X", "name": f"kernel{k % 7}", "cat": "kernel", "pid": "0", "tid": 7,
             "ts": t + 2, "dur": 5, "bind_id": k, "flow_in": True},
            {"ph": "B", "name": f"region{k % 4}", "pid": 1, "tid": 9, "ts": t},
            {"ph": "E", "pid": 1, "tid": 9, "ts": t + 9},
            {"ph": "i", "name": f"mark{k % 5}", "pid": 1, "tid": 0, "ts": t + 1, "s": "p"},
            {"ph": "C", "name": "queue", "pid": 1, "ts": t, "args": {"depth": k % 9}},
            {"ph": "b", "name": f"req{k % 6}", "id": k % 11, "cat": "rq", "pid": 1, "ts": t},
            {"ph": "e", "name": f"req{k % 6}", "id": k % 11, "cat": "rq", "pid": 1, "ts": t + 3},
            {"ph": "s", "name": "f", "cat": f"flow{k % 3}", "id": f"x{k}", "pid": 1, "tid": 0,
             "ts": t + 1},
            {"ph": "f", "name": "f", "cat": f"flow{k % 3}", "id": f"x{k}", "pid": 1, "tid": 1,
             "ts": t + 4, "bp": "e"},
            {"ph": "i", "name": "[memory]", "pid": 1, "tid": 0, "ts": t + 2,
             "args": {"Bytes": 64, "Total Allocated": 64 * k, "Total Reserved": 1 << 20,
                      "Device Type": 1, "Device Id": 0}},
            {"ph": "X", "name": "no ts", "pid": 1, "tid": 0},
        )  # fmt: skip


def test_every_phase_and_the_keys_after_the_array_are_the_same(tmp_path):
    path = tmp_path / "mixed.json"
    body = ",\n".join(json.dumps(e) for e in _mixed_events(3000))
    # Keys after the array, one holding an array of objects (a cut there is no event boundary).
    path.write_text(
        '{"traceEvents": [\n' + body + '\n],\n "deviceProperties": [{"id": 0}, {"id": 1}],\n'
        ' "traceName": "x]}"}\n'
    )
    assert parallel_ran(path) is not None
    trace = both(path)
    assert trace.metadata["traceName"] == "x]}" and len(trace.metadata["deviceProperties"]) == 2
    assert trace.skipped["missing or non-numeric ts"] == 3000
    assert len(trace.memory.ts) == 3000 and trace.counters


def test_an_array_form_trace_is_the_same(tmp_path):
    path = tmp_path / "array.json"
    path.write_text("[\n" + ",\n".join(json.dumps(e) for e in _mixed_events(2000)) + "\n]\n")
    assert parallel_ran(path) is not None
    both(path)


def test_damage_in_the_middle_is_read_by_the_single_pass(tmp_path, kineto):
    text = kineto.read_text()
    middle = text.index('"ph": "X"', len(text) // 2)
    broken = tmp_path / "broken.json"
    broken.write_text(text[:middle] + '"ph": "X", "ts": nope, ' + text[middle + 9 :])
    assert parallel_ran(broken) is None
    trace = both(broken)
    assert sum(trace.skipped.values()) >= 1


def test_cuts_inside_strings_are_read_by_the_single_pass(tmp_path):
    """Every name holds what the cut looks for, so a planned cut lands inside a value."""
    path = tmp_path / "strings.json"
    events = [
        {"ph": "X", "name": 'a}, {"b' * 40, "pid": 1, "tid": 1, "ts": k, "dur": 1}
        for k in range(3000)
    ]
    path.write_text('{"traceEvents": [' + ", ".join(json.dumps(e) for e in events) + "]}")
    assert parallel_ran(path) is None
    assert len(both(path).slices) == 3000


def test_a_truncated_file_is_read_by_the_single_pass(tmp_path, kineto):
    cut = tmp_path / "cut.json"
    text = kineto.read_text()
    cut.write_text(text[: len(text) * 2 // 3])
    assert parallel_ran(cut) is None
    assert both(cut).format.truncated


def test_a_cancelled_load_leaves_no_worker_behind(kineto):
    class Stop(Exception):
        pass

    def progress(done, total, events):
        assert 0 <= done <= total
        raise Stop

    before = _children()
    with pytest.raises(Stop):
        load_trace(kineto, progress=progress, workers=3)
    assert _children() <= before  # every worker was reaped (other tests' children may live)


def _children() -> set[int]:
    """This process's live child processes (Linux)."""
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            found |= {int(pid) for pid in f.read().split()}
    return found


def test_a_file_that_is_not_a_trace_still_says_so(tmp_path):
    path = tmp_path / "numbers.json"
    path.write_text("[" + ", ".join(str(k) for k in range(20000)) + "]")
    with pytest.raises(TraceError, match="not a trace"):
        load_trace(path, workers=2)


def test_a_worker_that_cannot_start_leaves_the_load_to_one_pass(kineto, monkeypatch):
    started = []
    real = parallel._start_worker

    def flaky():
        if started:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        started.append(real())
        return started[-1]

    monkeypatch.setattr(parallel, "_start_worker", flaky)
    assert parallel_ran(kineto, workers=3) is None
    # The one that started was stopped and waited for (no zombie): its return code was read.
    # Not os.waitpid(-1): another test on this xdist worker may have a child of its own.
    assert started[0].returncode is not None
    both(kineto)


def test_workers_read_the_file_this_process_opened_not_one_put_in_its_place(tmp_path):
    """A profiler writing its next trace under the same name while this one loads."""
    path, other = tmp_path / "t.json", tmp_path / "next.json"
    with open(path, "w") as f:
        generate(20000, f)
    text = path.read_text()
    other.write_text(text.replace("aten::linear", "NEW!::linear"))
    source = read_source(path)
    os.replace(other, path)
    layout = locate_events(source.data, source.path)
    decoded = read_parallel(source, layout, 3, None)
    names = decoded.collected.names.values if decoded is not None else []
    assert not [n for n in names if "NEW" in n]


class _Worker:
    """A worker process as the feeding thread sees it: its pipes. It answers each run in the
    order sent, noting how many runs it had been sent and not yet answered at that moment."""

    def __init__(self) -> None:
        self.on_answer = lambda: None
        self.stdin = self.stdout = self
        self.sent = bytearray()
        self.answered = 0
        self.waiting: list[int] = []

    def write(self, data: bytes) -> None:
        self.sent += data

    def flush(self) -> None:
        pass

    def readline(self) -> bytes:
        stream = io.BytesIO(bytes(self.sent))
        jobs = []
        while stream.tell() < len(self.sent):
            jobs.append(pickle.load(stream))
        self.waiting.append(len(jobs) - self.answered)
        spool = jobs[self.answered][-1]
        with open(spool, "wb") as f:
            pickle.dump(parallel.Part(Collected(), [], 1, False), f)
        self.answered += 1
        self.on_answer()
        return b"ok\n"


def test_a_worker_has_its_next_run_before_it_finishes_one_until_the_queue_runs_low(
    kineto, tmp_path, monkeypatch
):
    """Fed one run at a time, a worker waited on this process's decoding thread for each next
    run (a third of its time at 1M events). At the queue's end it holds no run another
    process could take."""
    worker, parts, spool = _fed(kineto, tmp_path, monkeypatch)
    # Two runs in its pipe while more than one run per process is left, then one.
    assert worker.waiting == [2, 2, 2, 1, 1, 1]
    assert all(part is not None for part in parts)
    assert not list(spool.iterdir())  # each run's part read and removed


def test_a_cancelled_load_stops_feeding_with_a_run_still_in_the_pipe(kineto, tmp_path, monkeypatch):
    """Another process's run failed: the one pass will read the file, so the run still queued
    here is not waited for (stop() ends the worker)."""
    worker, parts, _ = _fed(kineto, tmp_path, monkeypatch, parallel._Queue.cancel)
    assert worker.waiting == [2]
    assert parts[0] is not None and parts[1:] == [None] * 5


def _fed(kineto, tmp_path, monkeypatch, on_answer=lambda queue: None):
    """(the worker, the parts, the spool folder) once a helper has fed a fake worker six runs,
    taking them all (no other process takes any); `on_answer(queue)` as each run is answered."""
    worker = _Worker()
    monkeypatch.setattr(parallel, "_start_worker", lambda: worker)
    source = read_source(kineto)
    layout = locate_events(source.data, source.path)
    queue = parallel._Queue([layout] * 6, takers=2)
    worker.on_answer = lambda: on_answer(queue)
    parts: list = [None] * 6
    spool = tmp_path / "spool"
    spool.mkdir()
    helper = parallel._Helper(source, CHUNK, queue, parts, spool)
    helper.begin(0)
    helper.join()
    return worker, parts, spool
