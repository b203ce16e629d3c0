"""Lint, format and types are part of the test run, so CI and the README's command check them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    if not path.exists():
        pytest.fail(f"{name} is not installed (pip install -e '.[test]')")
    return str(path)


@pytest.mark.parametrize(
    "command",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["mypy"]],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_tool_passes(command):
    done = subprocess.run(
        [_tool(command[0]), *command[1:]], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_ci_runs_the_readme_test_command_exactly():
    readme = (ROOT / "README.md").read_text()
    blocks = [b.split("```", 1)[0].strip() for b in readme.split("```sh\n")[1:3]]
    run_command, test_command = blocks
    assert "trace-tui" in run_command
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci
