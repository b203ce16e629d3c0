"""The App: loads off the event loop, then shows what it loaded on a screen of tui/screens/: one
trace (TraceScreen), a rank set (RankScreen, a rank's TraceScreen pushed on it) or a BASE/NEW
pair (two modes, a TraceScreen each; `o` switches between them)."""

from __future__ import annotations

import time
from typing import ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.message import Message

from tui.model.analysis.diff import TraceDiff, aligned_window, diff
from tui.model.analysis.rank_compare import RankReport, compare
from tui.model.analysis.rank_stats import RankStats
from tui.model.analysis.steps import profiled_window
from tui.model.analysis.verdict import Verdict, judge
from tui.model.errors import TraceError
from tui.model.ingest import load_trace
from tui.model.ingest.cache import ModelCache
from tui.model.ingest.rank_folder import RankFiles
from tui.model.present.rank_pass import RankFailed, summarise_ranks
from tui.model.text import printable
from tui.model.trace import Trace
from tui.screens.help import HelpScreen
from tui.screens.loading import LoadScreen
from tui.screens.ranks import RankScreen
from tui.screens.trace import Pair, TraceScreen
from tui.widgets.rank_view import RankView

_PROGRESS_EVERY_S = 0.25
SIDES = ("BASE", "NEW")  # a pair's modes


class LoadCancelled(Exception):
    """Raised in the loading thread to stop it when the user quits."""


class TraceApp(App[None]):
    """trace-tui: one trace, a folder of rank traces, or two traces to compare."""

    CSS_PATH = "app.tcss"
    TITLE = "trace-tui"
    HELP_TITLE = "Anywhere"
    # q and ? are every screen's (keys.COMMON): the footer shows them after the pane's keys.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    class Loaded(Message):
        """A trace has loaded (`rank`: which of a rank set; `side`: which of a pair)."""

        def __init__(self, trace: Trace, verdict: Verdict | None, rank: int | None, side: int):
            super().__init__()
            self.trace, self.verdict, self.rank, self.side = trace, verdict, rank, side

    class LoadFailed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    class RanksLoaded(Message):
        def __init__(self, report: RankReport, failed: list[RankFailed]) -> None:
            super().__init__()
            self.report, self.failed = report, failed

    class PairDiffed(Message):
        """What changed between BASE and NEW, once both are loaded."""

        def __init__(self, changes: TraceDiff) -> None:
            super().__init__()
            self.changes = changes

    class LoadProgressed(Message):
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
        self.path, self.cache, self.shown_as = path, cache, shown_as
        self.ranks = ranks  # a folder of one job's rank traces
        self.load_workers = workers  # processes that read the rank set, or one big trace
        self.notice = notice  # one line to show once the app is up (a folder's mix of jobs)
        # Two traces to compare: BASE (`path`) shows first, NEW loads behind it.
        self.pair = Pair() if new is not None else None
        self.new = new
        self._sides: dict[str, TraceScreen] = {}  # a pair's screens, by mode
        self._rank_screen: RankScreen | None = None
        self._keep_window: tuple[int, int] | None = None  # the next rank's window, absolute
        self._cancelled = False
        self._last_progress = 0.0
        self.load_error: str | None = None
        self.shown_errors: list[str] = []  # what the error screen showed (tests fail on these)
        self.sub_title = printable(shown_as or path)

    def _get_dom_base(self) -> DOMNode:
        """A query from the app asks the screen shown (Textual's asks the default screen,
        which here is empty: every widget lives on a screen of tui/screens/)."""
        return self.screen

    # What is shown now (None while loading, on the rank table, or once the app has closed).
    def _shown(self) -> TraceScreen | None:
        stack = self.screen_stack
        return stack[-1] if stack and isinstance(stack[-1], TraceScreen) else None

    @property
    def trace(self) -> Trace | None:
        shown = self._shown()
        return shown.trace if shown is not None else None

    @property
    def rank(self) -> int | None:
        shown = self._shown()
        return shown.rank if shown is not None else None

    @property
    def side(self) -> int:
        return SIDES.index(self.current_mode) if self.current_mode in SIDES else 0

    @property
    def changes(self) -> TraceDiff | None:
        return self.pair.changes if self.pair is not None else None

    def on_mount(self) -> None:
        if self.notice is not None:
            self.notify(self.notice, timeout=8, markup=False)
        self.push_screen(LoadScreen(self.path))
        if self.ranks is not None:
            self.load_ranks(self.ranks)
        else:
            self.load(self.path, None, 0)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.screen))

    async def action_quit(self) -> None:
        self._cancelled = True  # a load in progress stops at its next chunk
        self.exit()

    # --- loading, in threads: only messages cross back ------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load_ranks(self, ranks: RankFiles) -> None:
        """Summarise every rank off the event loop (in worker processes for a big set)."""

        def done(finished: int, total: int) -> None:
            if self._cancelled:
                raise LoadCancelled
            self.call_from_thread(self._rank_progress, finished, total)

        try:
            results = summarise_ranks(ranks, self.load_workers, self.cache is not None, done=done)
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

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self, path: str, rank: int | None, side: int) -> None:
        """Load `path`; for a pair, BASE then NEW and what changed between them."""
        try:
            trace = self._read(path)
            self.post_message(self.Loaded(trace, _verdict(trace), rank, side))
            if self.new is not None and side == 0:
                new = self._read(self.new)
                self.post_message(self.Loaded(new, _verdict(new), None, 1))
                self.post_message(self.PairDiffed(diff(trace, new)))
        except LoadCancelled:
            return
        except TraceError as e:
            self.post_message(self.LoadFailed(str(e)))
        except Exception as e:  # a bug: one line on exit, never a traceback on screen
            self.post_message(
                self.LoadFailed(
                    f"{path}: cannot load ({type(e).__name__}: {e}); please report this with "
                    "the file"
                )
            )

    def _read(self, path: str) -> Trace:
        trace = load_trace(
            path, progress=self._progress, cache=self.cache, workers=self.load_workers
        )
        trace.args_reader.open()  # here, not on the first lookup in the UI thread
        return trace

    def _progress(self, done: int, total: int, events: int) -> None:
        if self._cancelled:
            raise LoadCancelled
        now = time.monotonic()
        if now - self._last_progress >= _PROGRESS_EVERY_S:
            self._last_progress = now
            self.post_message(self.LoadProgressed(done, total, events))

    def _rank_progress(self, done: int, total: int) -> None:
        if isinstance(self.screen, LoadScreen):
            self.screen.progress().update_ranks(done, total)

    def on_trace_app_load_progressed(self, message: LoadProgressed) -> None:
        if isinstance(self.screen, LoadScreen):
            self.screen.progress().update_progress(message.done, message.total, message.events)

    async def on_trace_app_load_failed(self, message: LoadFailed) -> None:
        if self._rank_screen is not None:  # one rank failed: the others still show
            while self.screen is not self._rank_screen:
                await self.pop_screen()
            self.notify(message.error, severity="error", timeout=8, markup=False)
            return
        self.load_error = message.error
        self.exit(return_code=1)

    # --- what was loaded, on its screen -------------------------------------------------

    async def on_trace_app_loaded(self, message: Loaded) -> None:
        trace, rank, side = message.trace, message.rank, message.side
        shown_as = self.shown_as
        if self.pair is not None:
            shown_as = f"{SIDES[side]} · {self.shown_as or self.path if side == 0 else self.new}"
        elif rank is not None and self.ranks is not None:
            shown_as = f"rank {rank} · {self.ranks.files[rank].name}"
        try:
            screen = TraceScreen(
                trace, message.verdict, shown_as, rank=rank, side=side, pair=self.pair
            )
        except Exception as e:  # a bug: one line on exit, never a traceback on screen
            self.load_error = (
                f"{trace.path}: cannot show ({type(e).__name__}: {e}); please report this with "
                "the file"
            )
            self.exit(return_code=1)
            return
        if self.pair is not None:
            self._sides[SIDES[side]] = screen
            self.add_mode(SIDES[side], lambda: screen)
            if side == 0:
                await self.switch_mode(SIDES[0])
                self.sub_title = printable(shown_as or "")
            return
        if rank is not None:
            self.sub_title = printable(f"rank {rank}: {trace.path}")
        await self.switch_screen(screen)
        kept, self._keep_window = self._keep_window, None
        if kept is not None and trace.base_time_ns is not None:
            screen.timeline.set_window(_within(kept, trace))

    def on_trace_app_pair_diffed(self, message: PairDiffed) -> None:
        assert self.pair is not None
        self.pair.changes = message.changes
        self.notify("NEW is loaded: o shows it, D shows what changed.", timeout=4)

    async def on_trace_app_ranks_loaded(self, message: RanksLoaded) -> None:
        assert self.ranks is not None
        self._rank_screen = RankScreen(self.ranks.folder, message.report, message.failed)
        await self.switch_screen(self._rank_screen)

    # --- moving between the screens -------------------------------------------------------

    async def on_rank_view_rank_chosen(self, message: RankView.RankChosen) -> None:
        await self._open_rank(message.rank)

    async def _open_rank(self, rank: int) -> None:
        """Load `rank`'s trace (through the cache) and show it over the rank table."""
        assert self.ranks is not None and self._rank_screen is not None
        self._rank_screen.shown = rank
        path = str(self.ranks.files[rank])
        if isinstance(self.screen, TraceScreen):
            await self.switch_screen(LoadScreen(path))
        else:
            await self.push_screen(LoadScreen(path))
        self.load(path, rank, 0)

    async def on_trace_screen_other_rank_wanted(self, message: TraceScreen.OtherRankWanted) -> None:
        if self.ranks is None or self.rank is None:
            return
        order = list(self.ranks.files)
        self._keep_window = message.window_ns
        await self._open_rank(order[(order.index(self.rank) + message.step) % len(order)])

    async def on_trace_screen_other_trace_wanted(
        self, message: TraceScreen.OtherTraceWanted
    ) -> None:
        """The other trace of the pair, at the same place in the same step; the diff pane goes
        with the user, as it was left."""
        here = self.screen
        if not isinstance(here, TraceScreen) or self.pair is None:
            return
        there = self._sides.get(SIDES[1 - here.side])
        if there is None:
            here.timeline.say("NEW is still loading.")
            return
        window = aligned_window(here.trace, there.trace, here.timeline.window)
        carried, diff_open = here.kept("diff"), here.open_pane == "diff"
        await self.switch_mode(SIDES[there.side])
        self.sub_title = printable(there.shown_as or "")
        there.timeline.set_window(window)
        if there.open_pane == "diff":
            there.close_pane()
        if carried is not None:
            there.left["diff"] = carried
        if diff_open:
            there.action_pane("diff")


def _within(window_ns: tuple[int, int], trace: Trace) -> tuple[int, int]:
    """An absolute window as `trace`'s own, moved inside it if it falls (partly) outside: a rank
    whose trace starts later than the last one's window (that window once crashed the ruler)."""
    base = trace.base_time_ns or 0
    width, span = window_ns[1] - window_ns[0], max(trace.span_ns, 1)
    t0 = min(max(window_ns[0] - base, 0), max(span - width, 0))
    return t0, min(t0 + width, span)


def _verdict(trace: Trace) -> Verdict | None:
    """The verdict on the profiled steps, shown while nothing is selected (None when the
    trace has nothing to judge it on)."""
    if not len(trace.slices):
        return None
    return judge(trace, *profiled_window(trace))
