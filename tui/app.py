"""The App: loads the trace off the event loop, then shows it."""

from __future__ import annotations

import time
from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Footer, Header

from tui.model import Trace, TraceError, load_trace
from tui.model.text import printable
from tui.widgets.lane_table import LaneTable
from tui.widgets.load_progress import LoadProgress
from tui.widgets.trace_summary import TraceSummary

_PROGRESS_EVERY_S = 0.25


class TraceApp(App[None]):
    """trace-tui: one trace, opened from a path."""

    CSS_PATH = "app.tcss"
    TITLE = "trace-tui"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
    ]

    class TraceLoaded(Message):
        """Posted when the trace has loaded."""

        def __init__(self, trace: Trace) -> None:
            super().__init__()
            self.trace = trace

    class LoadFailed(Message):
        """Posted when the trace could not be loaded."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    class LoadProgressed(Message):
        """Posted about every quarter second while the trace loads."""

        def __init__(self, done: int, total: int, events: int) -> None:
            super().__init__()
            self.done, self.total, self.events = done, total, events

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.trace: Trace | None = None
        self.load_error: str | None = None
        self._last_progress = 0.0
        self.sub_title = printable(path)

    def compose(self) -> ComposeResult:
        yield Header()
        yield LoadProgress(self.path)
        yield Footer()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        """Load in a thread; only messages cross back to the event loop."""
        try:
            trace = load_trace(self.path, progress=self._progress)
        except TraceError as e:
            self.post_message(self.LoadFailed(str(e)))
            return
        except (MemoryError, OSError, ValueError, OverflowError, RecursionError) as e:
            self.post_message(self.LoadFailed(f"{self.path}: cannot load: {e}"))
            return
        self.post_message(self.TraceLoaded(trace))

    def _progress(self, done: int, total: int, events: int) -> None:
        now = time.monotonic()
        if now - self._last_progress >= _PROGRESS_EVERY_S:
            self._last_progress = now
            self.post_message(self.LoadProgressed(done, total, events))

    def on_trace_app_load_progressed(self, message: LoadProgressed) -> None:
        self.query_one(LoadProgress).update_progress(message.done, message.total, message.events)

    def on_trace_app_load_failed(self, message: LoadFailed) -> None:
        self.load_error = message.error
        self.exit(return_code=1)

    async def on_trace_app_trace_loaded(self, message: TraceLoaded) -> None:
        self.trace = message.trace
        await self.query_one(LoadProgress).remove()
        await self.mount(
            TraceSummary(message.trace), LaneTable(message.trace), before=self.query_one(Footer)
        )
        self.query_one(LaneTable).focus()
