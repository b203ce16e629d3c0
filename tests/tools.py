"""The project's own checkers (ruff, mypy) as the tests run them.

mypy takes the longest of any test on a fresh clone (about 12 s with no cache), so when it is
among the tests to run, it is started as soon as collection ends and runs on the other core
while the rest of the suite does; its test then only waits for it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "ruff-check": ["ruff", "check", "."],
    "ruff-format": ["ruff", "format", "--check", "."],
    "mypy": ["mypy"],
}
_started: dict[str, tuple[subprocess.Popen[bytes], IO[bytes]]] = {}


def executable(name: str) -> Path:
    return Path(sys.executable).parent / name


def start(check: str) -> None:
    """Start a check in the background (once), if its tool is installed."""
    argv = COMMANDS[check]
    if check in _started or not executable(argv[0]).exists():
        return
    out = tempfile.TemporaryFile()  # noqa: SIM115 (closed in result)
    proc = subprocess.Popen(
        [str(executable(argv[0])), *argv[1:]], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
    )
    _started[check] = (proc, out)


def result(check: str) -> tuple[int, str]:
    """(exit status, output) of a check, started now unless it already runs."""
    start(check)
    proc, out = _started.pop(check)
    with out:
        code = proc.wait(timeout=600)
        out.seek(0)
        return code, out.read().decode(errors="replace")
