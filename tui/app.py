"""The App: loads the trace off the event loop, then shows it."""

from __future__ import annotations

import time
from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Input

from tui.model.analysis.gaps import idle_gaps
from tui.model.analysis.ops import op_rows
from tui.model.analysis.steps import profiled_window
from tui.model.analysis.verdict import Verdict, judge
from tui.model.errors import TraceError
from tui.model.ingest import load_trace
from tui.model.ingest.cache import ModelCache
from tui.model.text import printable
from tui.model.trace import Trace
from tui.widgets.error_screen import guarded
from tui.widgets.help_screen import HelpScreen
from tui.widgets.load_progress import LoadProgress
from tui.widgets.slice_details import SliceDetails
from tui.widgets.stats_pane import PaneState, StatsPane
from tui.widgets.stats_table import StatsTable
from tui.widgets.time_ruler import TimeRuler
from tui.widgets.timeline import Timeline
from tui.widgets.trace_summary import TraceSummary

_PROGRESS_EVERY_S = 0.25
# Keys the table and the timeline inherit from Textual, listed in the help.
_PAGING: list[BindingType] = [
    Binding("pageup,pagedown", "noop", "Scroll a page"),
]


class LoadCancelled(Exception):
    """Raised in the loading thread to stop it when the user quits."""


class TraceApp(App[None]):
    """trace-tui: one trace, opened from a path."""

    CSS_PATH = "app.tcss"
    TITLE = "trace-tui"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help"),
        Binding("slash", "search", "Search"),
        Binding("t", "toggle_stats", "Stats"),
        # The pane's own keys, also while the timeline has the focus (the pane declares them).
        Binding("x", "pane('toggle_kernels')", show=False),
        Binding("v", "pane('next_scope')", show=False),
        Binding("escape", "close_search", "Close search", show=False),
    ]

    class TraceLoaded(Message):
        """Posted when the trace has loaded."""

        def __init__(self, trace: Trace, verdict: Verdict | None) -> None:
            super().__init__()
            self.trace, self.verdict = trace, verdict

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

    def __init__(
        self, path: str, cache: ModelCache | None = None, shown_as: str | None = None
    ) -> None:
        super().__init__()
        self.path = path
        self.shown_as = shown_as  # what the header calls the trace (standard input's spool)
        self.cache = cache
        self._cancelled = False
        self.trace: Trace | None = None
        self.load_error: str | None = None
        self.shown_errors: list[str] = []  # what the error screen showed (tests fail on these)
        self._pane_state: PaneState | None = None  # how the stats pane was last left
        self._last_progress = 0.0
        self.sub_title = printable(shown_as or path)

    def compose(self) -> ComposeResult:
        yield LoadProgress(self.path)
        # Compact, without the palette hint: at 80 columns the keys that matter still fit.
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        """Load in a thread; only messages cross back to the event loop."""
        try:
            trace = load_trace(self.path, progress=self._progress, cache=self.cache)
            trace.args_reader.open()  # here, not on the first lookup in the UI thread
            verdict = _verdict(trace)
        except LoadCancelled:
            return
        except TraceError as e:
            self.post_message(self.LoadFailed(str(e)))
            return
        except Exception as e:  # a bug: one line on exit, never a traceback on screen
            self.post_message(
                self.LoadFailed(
                    f"{self.path}: cannot load ({type(e).__name__}: "
                    f"{e}); please report this with the file"
                )
            )
            return
        self.post_message(self.TraceLoaded(trace, verdict))

    def _progress(self, done: int, total: int, events: int) -> None:
        if self._cancelled:
            raise LoadCancelled
        now = time.monotonic()
        if now - self._last_progress >= _PROGRESS_EVERY_S:
            self._last_progress = now
            self.post_message(self.LoadProgressed(done, total, events))

    async def action_quit(self) -> None:
        self._cancelled = True  # a load in progress stops at its next chunk
        self.exit()

    def on_trace_app_load_progressed(self, message: LoadProgressed) -> None:
        self.query_one(LoadProgress).update_progress(message.done, message.total, message.events)

    def on_trace_app_load_failed(self, message: LoadFailed) -> None:
        self.load_error = message.error
        self.exit(return_code=1)

    async def on_trace_app_trace_loaded(self, message: TraceLoaded) -> None:
        try:
            timeline = Timeline(message.trace)
        except Exception as e:  # a bug: one line on exit, never a traceback on screen
            self.load_error = (
                f"{self.path}: cannot show ({type(e).__name__}: {e}); please report this with "
                "the file"
            )
            self.exit(return_code=1)
            return
        self.trace = message.trace
        await self.query_one(LoadProgress).remove()
        search = Input(placeholder="search slice names (enter: go, esc: close)", id="search")
        search.display = False
        await self.mount(
            TraceSummary(message.trace, self.shown_as),
            TimeRuler(),
            timeline,
            VerticalScroll(SliceDetails(message.verdict), id="details"),
            search,
            before=self.query_one(Footer),
        )
        timeline.focus()

    @guarded
    def on_timeline_window_changed(self, message: Timeline.WindowChanged) -> None:
        for timeline in self.query(Timeline):  # none while the app shuts down
            for ruler in self.query(TimeRuler):
                ruler.show(message.window, message.gutter, timeline.cells_width, message.marked)
        for pane in self.query(StatsPane):
            pane.follow(message.window, pane.selected, message.marked)

    @guarded
    def on_timeline_selection_changed(self, message: Timeline.SelectionChanged) -> None:
        trace = self.trace
        if trace is None:
            return
        for details in self.query(SliceDetails):
            if message.counter >= 0:
                details.show_counter(trace, message.counter, message.window)
            elif message.slice >= 0:
                details.show_slice(trace, message.slice)
            elif message.gap >= 0:
                details.show_gap(trace, idle_gaps(trace), message.gap)
            else:
                details.clear()
        for pane in self.query(StatsPane):
            pane.follow(message.window, message.slice, pane.marked)

    @guarded
    def action_toggle_stats(self) -> None:
        if self.trace is None:
            return
        panes = self.query(StatsPane)
        if panes:
            self._pane_state = panes.first().state()
            panes.first().remove()
            self.query_one("#details").display = True
            self.query_one(Timeline).focus()
            return
        self.query_one("#details").display = False
        timeline = self.query_one(Timeline)
        pane = StatsPane(
            self.trace, timeline.window, timeline.selected, timeline.marked, self._pane_state
        )
        self.mount(pane, after=self.query_one("#details"))
        self.call_after_refresh(self._focus_table, pane)

    def _focus_table(self, pane: StatsPane) -> None:
        for table in pane.query("#stats"):  # none when `t` closed the pane again at once
            table.focus()

    async def action_pane(self, action: str) -> None:
        panes = self.query(StatsPane)
        if not panes:
            self.notify("These keys work in the stats pane: t opens it.", timeout=3)
        for pane in panes:
            await pane.run_action(action)

    @guarded
    def on_stats_pane_row_chosen(self, message: StatsPane.RowChosen) -> None:
        if self.trace is None:
            return
        timeline = self.query_one(Timeline)
        rows = op_rows(self.trace, message.name)
        timeline.set_matches(rows)
        if message.jump:
            timeline.show_longest(rows)

    def action_help(self) -> None:
        forwarded = {"pane('toggle_kernels')", "pane('next_scope')"}
        own = [b for b in self.BINDINGS if not (isinstance(b, Binding) and b.action in forwarded)]
        sections = [
            ("Timeline", Timeline.BINDINGS),
            ("Stats pane (t)", [*StatsPane.BINDINGS, *StatsTable.BINDINGS, *_PAGING]),
            ("Anywhere", own),
        ]
        self.push_screen(HelpScreen(sections))

    def action_search(self) -> None:
        if self.trace is None:
            return
        search = self.query_one("#search", Input)
        search.display = True
        search.focus()

    def action_close_search(self) -> None:
        if self.trace is None:
            return
        search = self.query_one("#search", Input)
        search.display = False
        self.query_one(Timeline).focus()

    @guarded
    def on_input_submitted(self, message: Input.Submitted) -> None:
        timeline = self.query_one(Timeline)
        found = timeline.set_search(message.value)
        k, n = timeline.match_position()
        timeline.say(
            f"match {k:,} of {n:,} for {printable(message.value)!r} (n, N: next, previous)"
            if found
            else f"no slice name contains {printable(message.value)!r}"
        )
        self.action_close_search()


def _verdict(trace: Trace) -> Verdict | None:
    """The verdict on the profiled steps, shown while nothing is selected (None when the
    trace has nothing to judge it on)."""
    if not len(trace.slices):
        return None
    return judge(trace, *profiled_window(trace))
