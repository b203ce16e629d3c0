"""The App: loads the trace off the event loop, then shows it."""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Input

from tui.model.analysis.diff import TraceDiff, aligned_window, diff
from tui.model.analysis.gaps import idle_gaps
from tui.model.analysis.health import health
from tui.model.analysis.op_shapes import op_shapes
from tui.model.analysis.ops import op_rows
from tui.model.analysis.rank_compare import RankReport, compare
from tui.model.analysis.rank_stats import RankFailed, RankStats
from tui.model.analysis.steps import profiled_window
from tui.model.analysis.verdict import Verdict, judge
from tui.model.errors import TraceError
from tui.model.ingest.cache import ModelCache
from tui.model.ingest.rank_folder import RankFiles
from tui.model.passes import load_trace
from tui.model.passes.ranks import summarise_ranks
from tui.model.text import printable
from tui.model.trace import Trace
from tui.widgets.diff_pane import DiffPane, DiffState
from tui.widgets.error_screen import guarded
from tui.widgets.health_screen import HealthScreen
from tui.widgets.help_screen import HelpScreen
from tui.widgets.load_progress import LoadProgress
from tui.widgets.rank_view import RankView
from tui.widgets.slice_details import SliceDetails
from tui.widgets.stats_pane import PaneState, StatsPane
from tui.widgets.stats_table import StatsTable
from tui.widgets.time_ruler import TimeRuler
from tui.widgets.timeline import Timeline
from tui.widgets.trace_summary import TraceSummary
from tui.widgets.tree_pane import TreePane

_PROGRESS_EVERY_S = 0.25
# Keys the table and the timeline inherit from Textual, listed in the help.
_PAGING: list[BindingType] = [
    Binding("pageup,pagedown", "noop", "Scroll a page"),
]
# The tree widget's own keys, as the help lists them.
_TREE_KEYS: list[BindingType] = [
    Binding("space", "noop", "Open or close a node; enter goes to its longest slice"),
    Binding("backspace", "noop", "Flame view: zoom out (enter in; arrows move)"),
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
        Binding("H", "health", "Trace health", show=False),
        Binding("T", "toggle_tree", "Call tree"),
        # The pane's own keys, also while the timeline has the focus (the pane declares them).
        Binding("x", "pane('toggle_kernels')", show=False),
        Binding("S", "pane('toggle_shapes')", show=False),
        Binding("v", "pane('next_scope')", show=False),
        Binding("escape", "close_search", "Close search", show=False),
        # A rank set's keys (the footer shows them only then: see check_action).
        Binding("b", "back_to_ranks", "Ranks"),
        Binding("o", "other_trace", "Other trace"),
        Binding("D", "toggle_diff", "Diff"),
        Binding("less_than_sign", "other_rank(-1)", "Rank before, same time", show=False),
        Binding("greater_than_sign", "other_rank(1)", "Rank after, same time", show=False),
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

    class RanksLoaded(Message):
        """Posted when every rank of a rank set was summarised."""

        def __init__(self, report: RankReport, failed: list[RankFailed]) -> None:
            super().__init__()
            self.report, self.failed = report, failed

    class PairLoaded(Message):
        """NEW, loaded after BASE was shown, and what changed between them."""

        def __init__(self, trace: Trace, verdict: Verdict | None, changes: TraceDiff) -> None:
            super().__init__()
            self.trace, self.verdict, self.changes = trace, verdict, changes

    class LoadProgressed(Message):
        """Posted about every quarter second while the trace loads."""

        def __init__(self, done: int, total: int, events: int) -> None:
            super().__init__()
            self.done, self.total, self.events = done, total, events

    def __init__(
        self,
        path: str,
        cache: ModelCache | None = None,
        shown_as: str | None = None,
        ranks: RankFiles | None = None,
        workers: int | None = None,
        notice: str | None = None,
        new: str | None = None,
    ) -> None:
        super().__init__()
        # Two traces to compare: BASE (`path`) is shown first, NEW loads behind it; `o` shows
        # the other one, `D` what changed.
        self.pair = (path, new) if new is not None else None
        self.side = 0  # which of the pair is shown
        self.loaded: dict[int, tuple[Trace, Verdict | None]] = {}
        self.changes: TraceDiff | None = None
        self._diff_state: DiffState | None = None  # how the diff pane was last left
        self.notice = notice  # one line to show once the app is up (a folder's mix of jobs)
        self.path = path
        self.ranks = ranks  # a folder of one job's rank traces
        self.load_workers = workers  # processes that read the rank set, or one big trace
        self.rank: int | None = None  # the rank whose timeline is shown
        # The absolute window to show once the next rank's trace is loaded (`<`, `>`).
        self._keep_window: tuple[int, int] | None = None
        self.shown_as = shown_as  # what the header calls the trace (standard input's spool)
        if self.pair is not None:
            self.shown_as = _side_name(0, shown_as or path)
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
        if self.notice is not None:
            self.notify(self.notice, timeout=8, markup=False)
        if self.ranks is not None:
            self.load_ranks()
        else:
            self.load()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("other_trace", "toggle_diff"):
            return self.pair is not None and self.trace is not None
        if action in ("back_to_ranks", "other_rank"):
            return self.ranks is not None and self.rank is not None
        if action in ("search", "toggle_stats") and self.ranks is not None:
            return self.trace is not None  # not on the rank table
        return True

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load_ranks(self) -> None:
        """Summarise every rank off the event loop (in worker processes for a big set)."""
        ranks = self.ranks
        assert ranks is not None
        use_cache = self.cache is not None

        def done(finished: int, total: int) -> None:
            if self._cancelled:
                raise LoadCancelled
            self.call_from_thread(self.query_one(LoadProgress).update_ranks, finished, total)

        try:
            results = summarise_ranks(ranks, self.load_workers, use_cache, done=done)
        except LoadCancelled:
            return
        stats = [r for r in results if isinstance(r, RankStats)]
        failed = [r for r in results if isinstance(r, RankFailed)]
        if len(stats) < 2:
            errors = "; ".join(f.error for f in failed)
            self.post_message(
                self.LoadFailed(f"{ranks.folder}: fewer than two ranks could be read: {errors}")
            )
            return
        report = compare(stats)
        report.notes[:0] = ranks.notes()
        self.post_message(self.RanksLoaded(report, failed))

    async def on_trace_app_ranks_loaded(self, message: RanksLoaded) -> None:
        await self.query_one(LoadProgress).remove()
        assert self.ranks is not None
        await self.mount(
            RankView(self.ranks.folder, message.report, message.failed),
            before=self.query_one(Footer),
        )

    async def on_rank_view_rank_chosen(self, message: RankView.RankChosen) -> None:
        await self._open_rank(message.rank)

    async def _open_rank(self, rank: int) -> None:
        """Show `rank`'s timeline in place of the rank table (loaded through the cache)."""
        assert self.ranks is not None
        self.rank = rank
        self.path = str(self.ranks.files[rank])
        self.shown_as = f"rank {rank} · {self.ranks.files[rank].name}"
        self.sub_title = printable(f"rank {rank}: {self.path}")
        for view in self.query("#trace-view"):
            await view.remove()
        self.trace = None
        for ranks in self.query(RankView):
            ranks.display = False
        await self.mount(LoadProgress(self.path), before=self.query_one(Footer))
        self.refresh_bindings()
        self.load()

    async def action_back_to_ranks(self) -> None:
        if self.ranks is None or self.rank is None:
            return
        self._cancelled = False
        for view in [*self.query("#trace-view"), *self.query(LoadProgress)]:
            await view.remove()
        rank, self.trace, self.rank = self.rank, None, None
        self.sub_title = printable(self.ranks.folder)
        for ranks in self.query(RankView):
            ranks.display = True
            ranks.show_rank(rank)
        self.refresh_bindings()

    async def action_other_rank(self, step: int) -> None:
        """The next or previous rank's timeline, at the same time (the traces' own clock)."""
        if self.ranks is None or self.rank is None or self.trace is None:
            return
        order = list(self.ranks.files)
        rank = order[(order.index(self.rank) + step) % len(order)]
        timeline = self.query_one(Timeline)
        base = self.trace.base_time_ns
        t0, t1 = timeline.window
        self._keep_window = (base + t0, base + t1) if base is not None else None
        await self._open_rank(rank)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        """Load in a thread; only messages cross back to the event loop."""
        try:
            trace = load_trace(
                self.path, progress=self._progress, cache=self.cache, workers=self.load_workers
            )
            trace.args_reader.open()  # here, not on the first lookup in the UI thread
            verdict = _verdict(trace)
            if self.pair is not None and not self.loaded:
                self.post_message(self.TraceLoaded(trace, verdict))
                new = load_trace(self.pair[1], cache=self.cache, workers=self.load_workers)
                new.args_reader.open()
                self.post_message(self.PairLoaded(new, _verdict(new), diff(trace, new)))
                return
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

    async def on_trace_app_load_failed(self, message: LoadFailed) -> None:
        if self.ranks is not None and self.rank is not None:  # one rank: the others still show
            await self.action_back_to_ranks()
            self.notify(message.error, severity="error", timeout=8, markup=False)
            return
        self.load_error = message.error
        self.exit(return_code=1)

    async def on_trace_app_trace_loaded(self, message: TraceLoaded) -> None:
        await self._show_trace(message.trace, message.verdict)
        if self.pair is not None:
            self.loaded[self.side] = (message.trace, message.verdict)

    async def _show_trace(
        self, trace: Trace, verdict: Verdict | None, window: tuple[int, int] | None = None
    ) -> None:
        try:
            timeline = Timeline(trace)
        except Exception as e:  # a bug: one line on exit, never a traceback on screen
            self.load_error = (
                f"{trace.path}: cannot show ({type(e).__name__}: {e}); please report this with "
                "the file"
            )
            self.exit(return_code=1)
            return
        self.trace = trace
        for progress in self.query(LoadProgress):
            await progress.remove()
        search = Input(placeholder="search slice names (enter: go, esc: close)", id="search")
        search.display = False
        view = Vertical(
            TraceSummary(trace, self.shown_as),
            TimeRuler(),
            timeline,
            VerticalScroll(SliceDetails(verdict), id="details"),
            search,
            id="trace-view",
        )
        await self.mount(view, before=self.query_one(Footer))
        kept, self._keep_window = self._keep_window, None
        if kept is not None and trace.base_time_ns is not None:
            base = trace.base_time_ns
            timeline.set_window((kept[0] - base, kept[1] - base))
        if window is not None:
            timeline.set_window(window)
        timeline.focus()
        self.refresh_bindings()

    def on_trace_app_pair_loaded(self, message: PairLoaded) -> None:
        self.loaded[1] = (message.trace, message.verdict)
        self.changes = message.changes
        self.notify("NEW is loaded: o shows it, D shows what changed.", timeout=4)

    async def action_other_trace(self) -> None:
        """The other trace of the pair, at the same place in the same step."""
        if self.pair is None or self.trace is None:
            return
        other = 1 - self.side
        if other not in self.loaded:
            self.query_one(Timeline).say("NEW is still loading.")
            return
        diff_open = bool(self.query(DiffPane))
        for pane in self.query(DiffPane):
            self._diff_state = pane.state()
        trace, verdict = self.loaded[other]
        window = aligned_window(self.trace, trace, self.query_one(Timeline).window)
        for view in self.query("#trace-view"):
            await view.remove()
        self.side, self.path = other, self.pair[other]
        self.shown_as = _side_name(other, self.path)
        self.sub_title = printable(self.shown_as)
        await self._show_trace(trace, verdict, window)
        if diff_open:
            self.action_toggle_diff()

    @guarded
    def action_toggle_diff(self) -> None:
        if self.trace is None or self.pair is None:
            return
        panes = self.query(DiffPane)
        if panes:
            self._diff_state = panes.first().state()
            self._close_pane(panes.first())
            return
        if self.changes is None:
            self.query_one(Timeline).say("NEW is still loading.")
            return
        if self.query(StatsPane):
            self.action_toggle_stats()  # one pane at a time
        for tree in self.query(TreePane):
            self._close_pane(tree)
        self.query_one("#details").display = False
        pane = DiffPane(self.changes, self._diff_state)
        self.mount(pane, after=self.query_one("#details"))
        self.call_after_refresh(self._focus_diff, pane)

    def _close_pane(self, pane: Vertical) -> None:
        """A pane closes: the details come back in its place, and keys go to the timeline."""
        pane.remove()
        self.query_one("#details").display = True
        self.query_one(Timeline).focus()

    def _focus_diff(self, pane: DiffPane) -> None:
        for table in pane.query("#diff"):
            table.focus()

    @guarded
    def on_diff_pane_row_chosen(self, message: DiffPane.RowChosen) -> None:
        if self.trace is None:
            return
        timeline = self.query_one(Timeline)
        rows = op_rows(self.trace, message.name)
        if not len(rows):
            there = "NEW" if self.side == 0 else "BASE"
            timeline.say(f"{printable(message.name)} is only in {there}: o shows {there}.")
            return
        timeline.set_matches(rows)
        timeline.show_longest(rows)

    @guarded
    def on_timeline_window_changed(self, message: Timeline.WindowChanged) -> None:
        for timeline in self.query(Timeline):  # none while the app shuts down
            for ruler in self.query(TimeRuler):
                ruler.show(message.window, message.gutter, timeline.cells_width, message.marked)
        for pane in self.query(StatsPane):
            pane.follow(message.window, pane.selected, message.marked)
        for tree in self.query(TreePane):
            tree.follow(message.window, tree.selected, message.marked)

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
        for tree in self.query(TreePane):
            tree.follow(message.window, message.slice, tree.marked)

    @guarded
    def action_toggle_tree(self) -> None:
        """The call tree pane, in the stats pane's place (one pane at a time)."""
        if self.trace is None:
            return
        panes = self.query(TreePane)
        if panes:
            self._close_pane(panes.first())
            return
        self._close_other_panes()
        self.query_one("#details").display = False
        timeline = self.query_one(Timeline)
        pane = TreePane(self.trace, timeline.window, timeline.selected, timeline.marked)
        self.mount(pane, after=self.query_one("#details"))

    def _close_other_panes(self) -> None:
        if self.query(DiffPane):
            self.action_toggle_diff()
        if self.query(StatsPane):
            self.action_toggle_stats()

    @guarded
    def on_tree_pane_node_chosen(self, message: TreePane.NodeChosen) -> None:
        for timeline in self.query(Timeline):
            timeline.show_longest(np.asarray([message.row], np.int64))

    @guarded
    def action_toggle_stats(self) -> None:
        if self.trace is None:
            return
        for tree in self.query(TreePane):
            self._close_pane(tree)  # one pane at a time
        if self.query(DiffPane):
            self.action_toggle_diff()  # one pane at a time
        panes = self.query(StatsPane)
        if panes:
            self._pane_state = panes.first().state()
            self._close_pane(panes.first())
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
        if message.shapes:  # a row of the by-shape table
            shapes = op_shapes(self.trace)
            rows = rows[shapes.shape[rows] == shapes.texts.index(message.shapes)]
        # The slices the row counts: those of its scope (a kernel's subtree: all of them).
        scope = message.scope
        if not (message.kernels and scope.root >= 0):
            inside = rows[scope.rows(self.trace)[rows]]
            rows = inside if len(inside) else rows
        timeline.set_matches(rows)
        if message.jump:
            timeline.show_longest(rows)

    @guarded
    def action_health(self) -> None:
        """torch's trace checks and what loading repaired; enter on an example goes to it."""
        trace = self.trace
        if trace is None:
            return

        def chosen(row: int | None) -> None:
            if row is not None:
                for timeline in self.query(Timeline):
                    timeline.show_longest(np.asarray([row], np.int64))  # selected, in view

        self.push_screen(HealthScreen(trace, health(trace)), chosen)

    def action_help(self) -> None:
        forwarded = {"pane('toggle_kernels')", "pane('toggle_shapes')", "pane('next_scope')"}
        rank_keys = {"back_to_ranks", "other_rank(-1)", "other_rank(1)"}
        pair_keys = {"other_trace", "toggle_diff"}

        def own(b: BindingType) -> bool:
            return not (isinstance(b, Binding) and b.action in forwarded | rank_keys | pair_keys)

        ranks = [b for b in self.BINDINGS if isinstance(b, Binding) and b.action in rank_keys]
        pair = [b for b in self.BINDINGS if isinstance(b, Binding) and b.action in pair_keys]
        sections = [
            *(
                [("Ranks (a folder of rank traces)", [*RankView.BINDINGS, *ranks])]
                if self.ranks
                else []
            ),
            *(
                [("Two traces (trace-tui BASE NEW)", [*pair, *DiffPane.BINDINGS])]
                if self.pair
                else []
            ),
            ("Timeline", Timeline.BINDINGS),
            ("Stats pane (t)", [*StatsPane.BINDINGS, *StatsTable.BINDINGS, *_PAGING]),
            ("Call tree (T)", [*TreePane.BINDINGS, *_TREE_KEYS]),
            ("Anywhere", [b for b in self.BINDINGS if own(b)]),
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


def _side_name(side: int, path: str) -> str:
    return f"{('BASE', 'NEW')[side]} · {path}"


def _verdict(trace: Trace) -> Verdict | None:
    """The verdict on the profiled steps, shown while nothing is selected (None when the
    trace has nothing to judge it on)."""
    if not len(trace.slices):
        return None
    return judge(trace, *profiled_window(trace))
