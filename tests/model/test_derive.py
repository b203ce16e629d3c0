"""`Trace.derive` from several threads, as the viewer asks: the header's thread derives the
step verdicts (seconds at 5M events) while the stats pane, opened on the main thread, asks for
them too. The second asker waits for the first one's result instead of deriving it again, and
a thread deriving one slot holds up no other."""

from __future__ import annotations

import threading

from tests.conftest import DATA
from tui.model.ingest import load_trace


def _in_thread(trace, key, compute, got):
    thread = threading.Thread(target=lambda: got.__setitem__(key, trace.derive(key, compute)))
    thread.start()
    return thread


def test_a_slot_asked_for_while_another_thread_derives_it_is_derived_once():
    trace = load_trace(DATA / "nested_cpu.json")
    started, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def slow():
        calls.append(threading.current_thread().name)
        started.set()
        release.wait(10)
        return object()

    first: dict = {}
    second: dict = {}
    a = _in_thread(trace, "slot", slow, first)
    assert started.wait(10)
    b = _in_thread(trace, "slot", slow, second)
    b.join(0.2)
    assert b.is_alive()  # waiting for the first thread's result
    release.set()
    a.join(10)
    b.join(10)
    assert len(calls) == 1 and first["slot"] is second["slot"] is trace.derive("slot", slow)


def test_a_slot_being_derived_holds_up_no_other_slot():
    trace = load_trace(DATA / "nested_cpu.json")
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(10)
        return "slow"

    got: dict = {}
    a = _in_thread(trace, "slow", slow, got)
    try:
        assert started.wait(10)
        b = _in_thread(trace, "other", lambda: "other", got)
        b.join(2)
        assert not b.is_alive() and got == {"other": "other"}  # while "slow" is still derived
    finally:
        release.set()
        a.join(10)
    assert got == {"slow": "slow", "other": "other"}
