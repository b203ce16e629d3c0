"""Loading as a user meets it: cancelling a long load, and the memory warning."""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
from pathlib import Path

from tests.conftest import DATA
from tui import app as app_module
from tui import cli
from tui.cli import make_app
from tui.model.ingest import footprint as memory

ROOT = Path(__file__).resolve().parents[2]


async def test_q_cancels_a_load_in_progress(tmp_path, monkeypatch):
    big = tmp_path / "big.json"
    subprocess.run(
        [sys.executable, str(ROOT / "tests/bench/gen_trace.py"), "400000", str(big)],
        check=True,
        capture_output=True,
    )
    outcome: list[str] = []
    started = threading.Event()
    real_load = app_module.load_trace

    def watched(*args, **kwargs):
        started.set()
        try:
            real_load(*args, **kwargs)
            outcome.append("finished")
        except app_module.LoadCancelled:
            outcome.append("cancelled")
            raise

    monkeypatch.setattr(app_module, "load_trace", watched)
    app = make_app(big)
    async with app.run_test() as pilot:
        started.wait(10)
        await pilot.press("q")
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(timeout=10)
    assert outcome == ["cancelled"] and app.trace is None and app.return_code == 0


def test_estimates_follow_the_file(tmp_path):
    plain = DATA / "gpu_streams.json"
    assert memory.estimate_memory(plain) >= plain.stat().st_size
    assert memory.estimate_memory(tmp_path / "missing.json") == 0
    free = memory.available_memory()
    assert free is None or free > 0


def test_headless_commands_warn_and_go_on(monkeypatch, capsys):
    monkeypatch.setattr(cli, "available_memory", lambda: 1)
    assert cli.main(["info", str(DATA / "nested_cpu.json")]) == 0
    err = capsys.readouterr().err
    assert "warning: loading" in err and "may need about" in err


def test_the_viewer_asks_before_a_load_that_may_not_fit(monkeypatch, capsys):
    monkeypatch.setattr(cli, "available_memory", lambda: 1)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    opts = argparse.Namespace(yes=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert not cli._enough_memory(str(DATA / "nested_cpu.json"), opts, ask=True)
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert cli._enough_memory(str(DATA / "nested_cpu.json"), opts, ask=True)
    assert cli._enough_memory(str(DATA / "nested_cpu.json"), argparse.Namespace(yes=True), ask=True)
