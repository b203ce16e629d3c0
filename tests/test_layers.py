"""The import layers hold: the model has no UI, the viewer has no torch; the rooms stay small."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}; import sys; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return {m.split(".")[0] for m in done.stdout.split()}


def test_the_model_imports_no_ui():
    loaded = _modules_after("import tui.model")
    assert not loaded & {"textual", "rich", "torch", "profiling"}


def test_the_viewer_imports_no_torch():
    loaded = _modules_after("import tui.app, tui.cli")
    assert "textual" in loaded
    assert not loaded & {"torch", "profiling"}


def test_no_module_of_450_lines_or_more():
    sizes = {
        p: len(p.read_text().splitlines())
        for d in ("tui", "profiling")
        for p in (ROOT / d).rglob("*.py")
    }
    assert {str(p.relative_to(ROOT)): n for p, n in sizes.items() if n >= 450} == {}


def test_the_app_is_the_loader_and_the_mode_switch_in_at_most_200_lines():
    tree = ast.parse((ROOT / "tui" / "app.py").read_text())
    (app,) = [c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "TraceApp"]
    assert app.end_lineno is not None
    assert app.end_lineno - app.lineno + 1 <= 200


def test_import_linter_contracts():
    linter = Path(sys.executable).parent / "lint-imports"
    if not linter.exists():
        pytest.fail("import-linter is not installed (pip install -e '.[test]')")
    done = subprocess.run([str(linter)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_headless_commands_create_no_dataclass_but_the_trace():
    """Their records are msgspec structs: a frozen dataclass takes 0.3-0.5 ms to create, at
    every start (a struct 0.01 ms), and 81 of them were a third of a cached `summary`'s CPU."""
    code = (
        "import sys, dataclasses, tui.commands as c\n"
        "[r.load() for r in c.COMMANDS if r.name in ('summary', 'diff', 'info')]\n"
        "print(' '.join(sorted(f'{m}.{n}' for m, mod in list(sys.modules.items())"
        " if m.startswith('tui.') for n, v in vars(mod).items()"
        " if isinstance(v, type) and v.__module__ == m and dataclasses.is_dataclass(v))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.split() == ["tui.model.trace.Trace"]
