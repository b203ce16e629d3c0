"""How the tests open the app, and run the CLI as a user does."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from concurrent.futures import Executor
from contextlib import asynccontextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from tui.cli import main, make_app
from tui.model.ingest.cache import ModelCache

ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def loaded(
    path: Path | str,
    size: tuple[int, int] = (120, 30),
    *,
    expect_error: bool = False,
    cache: ModelCache | None = None,
    new: Path | str | None = None,
    shown_as: str | None = None,
    executor: Executor | None = None,
) -> AsyncIterator[Any]:
    """(pilot, app) with the trace at `path` loaded in a headless terminal of `size` (and with
    `new`, that second trace too, to compare).

    The test fails if the app showed its error screen (an action raised), unless it says it
    expects that.
    """
    app = make_app(path, cache, shown_as, new=new, executor=executor)
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        # The ruler follows the timeline's first window message, which a loaded machine may
        # still be delivering after the pause.
        for _ in range(40):
            rulers = app.query("TimeRuler")
            if not rulers or rulers.first().cells > 1:
                break
            await pilot.pause(0.05)
        yield pilot, app
        await pilot.pause()
    if not expect_error:
        assert not app.shown_errors, f"the app showed its error screen: {app.shown_errors}"


@dataclass(frozen=True)
class Done:
    """What a CLI run gave: as subprocess.CompletedProcess names it."""

    returncode: int
    stdout: str
    stderr: str


def run(*args: str, process: bool = False) -> Done:
    """`trace-tui ARGS`: in this process through `main` (fast), or as `python -m tui` in a
    subprocess (`process=True`, for what only a real process shows: the entry point, exit
    codes, no traceback on the way out)."""
    if process:
        done = subprocess.run(
            [sys.executable, "-m", "tui", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        return Done(done.returncode, done.stdout, done.stderr)
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = main(list(args))
    stdout.flush()
    stderr.flush()
    return Done(code, out.getvalue().decode(), err.getvalue().decode())


def interruptible(*args: str, **popen: Any) -> subprocess.Popen[str]:
    """`trace-tui ARGS` as a process that SIGINT stops, as ctrl+c does in a terminal. A shell
    that starts the suite in the background hands it SIGINT ignored, and a Python started so
    raises no KeyboardInterrupt: the child gets the default back."""
    return subprocess.Popen(
        [sys.executable, "-m", "tui", *args],
        cwd=ROOT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **popen,
    )


async def until_failed(pilot: Any, app: Any) -> None:
    """Wait (up to 5 s) for a load that fails in its worker to end the app by itself."""
    for _ in range(500):
        if app.load_error is not None:
            return
        await pilot.pause(0.01)


def notes(app: Any) -> list[str]:
    """What the app has told the user in its notifications (the toasts), oldest first."""
    return [n.message for n in app._notifications]


def screen_rows(timeline: Any) -> list[Any]:
    """The display rows on screen now, top to bottom (pinned ones first)."""
    rows = [timeline.row_at(y) for y in range(timeline.view_height)]
    return [timeline.rows[i] for i in rows if i >= 0]


def drawn(app: Any) -> str:
    """Everything on the screen now, with its colours and styles, as the terminal would get it
    (what `export_screenshot` draws, without the cost of making an SVG of it)."""
    console = Console(
        width=app.size.width,
        height=app.size.height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        legacy_windows=False,
        safe_box=False,
    )
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    console.print(update)
    return console.file.getvalue()


async def resized(pilot: Any, app: Any, width: int, height: int) -> None:
    """Resize the terminal, then wait until the screen is laid out at that size and what its
    widgets do about it is done: Pilot's own wait, in short windows, can end before the app
    has passed the resize on to the screen."""
    await pilot.resize_terminal(width, height)
    # `screen.size` is the driver's at once; the screen is laid out at that size only once the
    # app has passed the resize on to it (its compositor's size), and its widgets are sent their
    # own Resize then (a pane fits its table's columns, the footer its keys, there): until that
    # is done, no layout is pending and no widget has a message waiting.
    for _ in range(300):
        screen = app.screen
        busy = app.message_queue_size or any(
            node.message_queue_size for node in screen.walk_children(with_self=True)
        )
        laid_out = screen._compositor.size == (width, height) and not screen._layout_required
        if laid_out and not busy:
            break
        await pilot.pause(0.01)
    else:
        raise AssertionError(f"the screen was not laid out at {width}x{height} in 3 s")
    await built(app, pilot)


async def built(app, pilot) -> None:
    """Until what the app builds in threads (the call tree, the roofline) is shown."""
    await app.workers.wait_for_complete()
    await pilot.pause()
