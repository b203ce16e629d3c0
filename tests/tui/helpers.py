"""Opening the app on a trace and waiting until it is loaded, as every Pilot test starts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tui.cli import make_app


@asynccontextmanager
async def loaded(path: Path | str, size: tuple[int, int] = (120, 30)) -> AsyncIterator[Any]:
    """(pilot, app) with the trace at `path` loaded in a headless terminal of `size`."""
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        yield pilot, app
