"""Shared fixtures: the scenario traces in tests/data and the real ones in ../shared/traces."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Tests and the programs they start never touch the user's model cache.
os.environ.setdefault("TRACE_TUI_CACHE_DIR", tempfile.mkdtemp(prefix="trace-tui-test-cache-"))

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces"


def shared_traces() -> list[Path]:
    """Every trace file in ../shared/traces (empty when the folder is absent)."""
    if not SHARED.is_dir():
        return []
    return sorted(
        p
        for p in SHARED.rglob("*")
        if p.is_file()
        and not p.name.endswith((".md", ".csv"))
        and not p.name.startswith(".")
        and "reports" not in p.relative_to(SHARED).parts
    )


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"real traces not present: {SHARED} is missing")
    return SHARED
