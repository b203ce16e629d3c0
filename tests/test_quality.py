"""Lint, format and types are part of the test run, so CI and the README's command check them."""

from __future__ import annotations

import re

import pytest

from tests import tools

ROOT = tools.ROOT


@pytest.mark.parametrize("check", list(tools.COMMANDS))
def test_tool_passes(check):
    name = tools.COMMANDS[check][0]
    if not tools.executable(name).exists():
        pytest.fail(f"{name} is not installed (pip install -e '.[test]')")
    code, output = tools.result(check)
    assert code == 0, output


def test_ci_runs_the_readme_test_command_exactly():
    readme = (ROOT / "README.md").read_text()
    blocks = [b.split("```", 1)[0].strip() for b in readme.split("```sh\n")[1:3]]
    run_command, test_command = blocks
    assert "trace-tui" in run_command
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci


def test_the_readme_test_command_installs_the_cpu_torch_ci_pins():
    readme = (ROOT / "README.md").read_text()
    test_command = readme.split("```sh\n")[2].split("```", 1)[0]
    pins = set(re.findall(r"torch==([\d.]+)", (ROOT / ".ci" / "run").read_text()))
    assert len(pins) == 1
    (pin,) = pins
    cpu_index = "https://download.pytorch.org/whl/cpu"
    assert test_command.startswith(
        f"python3 -m pip install torch=={pin} --extra-index-url {cpu_index} &&"
    )
