"""Loading as a user meets it: progress only for a load that takes a moment, cancelling a long
load, and the memory warning."""

from __future__ import annotations

import argparse
import sys
import threading
import time

from textual.widgets import Static

from tests.conftest import DATA
from tests.model.test_diff import step_trace
from tui import cli
from tui.cli import make_app
from tui.commands import loading
from tui.model.ingest import footprint as memory
from tui.model.ingest.chrome_json import chunks
from tui.screens import loading as loading_module


async def test_q_cancels_a_load_in_progress(monkeypatch):
    """The load is held inside its first progress report until `q` has been pressed (the app
    has marked itself cancelled); the app's own progress callback must then stop the real load
    at the next chunk."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 256)  # many chunks, so the load is mid-way
    outcome: list[str] = []
    started, ended = threading.Event(), threading.Event()
    real_load = loading_module.load_trace

    def watched(path, progress, cache, workers):
        def held(done: int, total: int, events: int) -> None:
            started.set()
            deadline = time.monotonic() + 10
            while not app.cancelled.is_set() and time.monotonic() < deadline:
                time.sleep(0.001)
            progress(done, total, events)

        try:
            real_load(path, progress=held, cache=cache, workers=workers)
            outcome.append("finished")
        except loading_module.LoadCancelled:
            outcome.append("cancelled")
            raise
        finally:
            ended.set()  # the worker's thread stays in its pool: wait for the load, not it

    monkeypatch.setattr(loading_module, "load_trace", watched)
    app = make_app(DATA / "gpu_streams.json")
    async with app.run_test() as pilot:
        for _ in range(1000):  # wait without blocking the event loop the worker starts from
            if started.is_set():
                break
            await pilot.pause(0.01)
        assert started.is_set()
        await pilot.press("q")
    assert ended.wait(10)
    assert outcome == ["cancelled"] and app.trace is None and app.return_code == 0


async def test_a_quick_load_never_flashes_its_progress(monkeypatch):
    # Half a second: a small trace loads in 10-30 ms, with room for a loaded machine.
    monkeypatch.setattr(loading_module, "SHOW_AFTER_S", 0.5)
    shown = []

    class Watched(loading_module.LoadProgress):
        def on_mount(self) -> None:
            shown.append(self.path)

    monkeypatch.setattr(loading_module, "LoadProgress", Watched)
    app = make_app(DATA / "gpu_streams.json")
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause(loading_module.SHOW_AFTER_S + 0.1)
        assert app.trace is not None
    assert shown == []


async def test_a_slow_load_shows_what_it_had_read_before_its_bar_showed(monkeypatch):
    """The first progress report comes at once, before the bar shows; the bar shows it."""
    reported, release = threading.Event(), threading.Event()
    real_load = loading_module.load_trace

    def slow(path, progress, cache, workers):
        progress(1_500_000, 3_000_000, 1234)
        reported.set()
        release.wait(10)
        return real_load(path, progress=progress, cache=cache, workers=workers)

    monkeypatch.setattr(loading_module, "load_trace", slow)
    app = make_app(DATA / "gpu_streams.json")
    async with app.run_test() as pilot:
        try:
            for _ in range(200):
                await pilot.pause(0.01)
                if reported.is_set() and app.screen.query("#load-detail"):
                    break
            detail = app.screen.query_one("#load-detail", Static)
            await pilot.pause()
            assert str(detail.render()) == "1.5 of 3.0 MB, 1,234 events"
        finally:
            release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.trace is not None


async def test_the_load_screen_left_behind_a_pairs_base_shows_no_bar(tmp_path, monkeypatch):
    """BASE shows while the same load screen reads NEW, unseen in the mode BASE replaced: its
    bar is not mounted there when NEW takes a moment."""
    step_trace(tmp_path / "base.json", [("k_a", 10.0)])
    step_trace(tmp_path / "new.json", [("k_b", 12.0)])
    monkeypatch.setattr(loading_module, "SHOW_AFTER_S", 0.05)
    shown, release = [], threading.Event()

    class Watched(loading_module.LoadProgress):
        def on_mount(self) -> None:
            shown.append(self.path)

    real_load = loading_module.load_trace

    def new_waits(path, progress, cache, workers):
        if path.endswith("new.json"):
            release.wait(10)
        return real_load(path, progress=progress, cache=cache, workers=workers)

    monkeypatch.setattr(loading_module, "LoadProgress", Watched)
    monkeypatch.setattr(loading_module, "load_trace", new_waits)
    app = make_app(tmp_path / "base.json", new=tmp_path / "new.json")
    async with app.run_test() as pilot:
        try:
            for _ in range(200):
                await pilot.pause(0.01)
                if app.trace is not None:
                    break
            await pilot.pause(0.2)  # past SHOW_AFTER_S, NEW still loading
            assert app.trace is not None and shown == []
        finally:
            release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert shown == []


def test_estimates_follow_the_file(tmp_path):
    plain = DATA / "gpu_streams.json"
    assert memory.estimate_memory(plain) >= plain.stat().st_size
    assert memory.estimate_memory(tmp_path / "missing.json") == 0
    free = memory.available_memory()
    assert free is None or free > 0


def test_headless_commands_warn_and_go_on(monkeypatch, capsys):
    monkeypatch.setattr(loading, "available_memory", lambda: 1)
    # --no-cache: a cached `info` loads nothing, so needs no memory and warns of none
    assert cli.main(["info", "--no-cache", str(DATA / "nested_cpu.json")]) == 0
    err = capsys.readouterr().err
    assert "warning: loading" in err and "may need about" in err


def test_the_viewer_asks_before_a_load_that_may_not_fit(monkeypatch, capsys):
    monkeypatch.setattr(loading, "available_memory", lambda: 1)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    opts = argparse.Namespace(yes=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert not loading.enough_memory(str(DATA / "nested_cpu.json"), opts, ask=True)
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert loading.enough_memory(str(DATA / "nested_cpu.json"), opts, ask=True)
    assert loading.enough_memory(
        str(DATA / "nested_cpu.json"), argparse.Namespace(yes=True), ask=True
    )


async def test_a_rank_sets_load_shows_the_time_left(tmp_path, monkeypatch):
    """The first rank done a second after the start gives the bar its time left (it read
    `--:--:--` throughout: its first sample came with the first rank done)."""
    from textual.widgets._progress_bar import ETAStatus

    from tests.bench.make_rank_set import write_rank_set

    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1, slow_step=1)
    real, seen = loading_module.summarise_ranks, threading.Event()

    def slow(ranks, workers, use_cache, executor, done):
        time.sleep(1.1)
        done(1, len(ranks.files))
        seen.wait(10)
        return real(ranks, workers, use_cache, executor, done=done)

    monkeypatch.setattr(loading_module, "summarise_ranks", slow)
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 20)) as pilot:
        for _ in range(100):
            await pilot.pause(0.05)
            shown = str(app.screen.query_one(ETAStatus).render())
            if shown != "--:--:--":
                break
        seen.set()
        await app.workers.wait_for_complete()
    assert shown[:2] == "00", shown
