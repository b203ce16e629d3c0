"""torch, imported by the tests that need it when they run: not by every xdist worker while it
collects the suite (1.4 s of CPU each)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def torch():
    return pytest.importorskip("torch", reason="torch is not installed (the profiling extra)")


@pytest.fixture(scope="session")
def export(torch):
    """profiling.export: the backend's runner (imports torch)."""
    from profiling import export

    return export
