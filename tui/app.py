"""The App: loads off the event loop, then shows what it loaded on a screen of tui/screens/: one
trace (TraceScreen), a rank set (RankScreen, a rank's TraceScreen pushed on it) or a BASE/NEW
pair (two modes, a TraceScreen each; `o` switches between them)."""

from __future__ import annotations

import threading
from concurrent.futures import Executor
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.dom import DOMNode

from tui.following import Following
from tui.model.analysis.diff import TraceDiff
from tui.model.ingest.cache import ModelCache
from tui.model.ingest.rank_folder import RankFiles
from tui.model.ingest.watch import Watch
from tui.model.text import printable
from tui.model.trace import Trace
from tui.screens.help import HelpScreen
from tui.screens.loading import Load, LoadScreen
from tui.screens.ranks import RankScreen
from tui.screens.trace import Pair, TraceScreen
from tui.widgets.focus import KeysFollowFocus

SIDES = ("BASE", "NEW")  # a pair's modes


class TraceApp(KeysFollowFocus):
    """trace-tui: one trace, a folder of rank traces, or two traces to compare."""

    CSS_PATH = "app.tcss"
    TITLE = "trace-tui"
    HELP_TITLE = "Anywhere"
    # q and ? are every screen's (keys.COMMON): the footer shows them after the pane's keys.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("F", "newest", "Newest trace"),
    ]

    def __init__(
        self,
        path: str,
        cache: ModelCache | None = None,
        shown_as: str | None = None,
        ranks: RankFiles | None = None,
        workers: int | None = None,
        notice: str | None = None,
        new: str | None = None,
        executor: Executor | None = None,
        follow: float | None = None,
        watch: Watch | None = None,
    ) -> None:
        super().__init__()
        self.path, self.cache, self.shown_as = path, cache, shown_as
        self.ranks = ranks  # a folder of one job's rank traces
        self.load_workers = workers  # processes that read the rank set, or one big trace
        self.rank_executor = executor  # a cluster's, to summarise the rank set on (--cluster)
        # --follow: the folder, looked at every `follow` seconds for new traces
        self.following = None if follow is None else Following(self, path, follow, ranks, watch)
        self.notice = notice  # one line to show once the app is up (a folder's mix of jobs)
        # Two traces to compare: BASE (`path`) shows first, NEW loads behind it.
        self.pair = Pair() if new is not None else None
        self.new = new
        self._sides: dict[str, TraceScreen] = {}  # a pair's screens, by mode
        self._rank_screen: RankScreen | None = None
        self.cancelled = threading.Event()
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
        return shown.trace if (shown := self._shown()) else None

    @property
    def rank(self) -> int | None:
        return shown.rank if (shown := self._shown()) else None

    @property
    def side(self) -> int:
        return SIDES.index(self.current_mode) if self.current_mode in SIDES else 0

    @property
    def changes(self) -> TraceDiff | None:
        return self.pair.changes if self.pair is not None else None

    def on_mount(self) -> None:
        if self.following is not None:
            self.following.start()
        if self.notice is not None:
            self.notify(self.notice, timeout=8, markup=False)
        self.push_screen(LoadScreen(self._load(self.path, self.ranks, self.new)))

    def _load(self, path: str, ranks: RankFiles | None = None, new: str | None = None) -> Load:
        """How `path` loads (the executor summarises a rank set's ranks, with `ranks`)."""
        kept = self.cache, self.load_workers, self.cancelled
        return Load(path, *kept, new=new, ranks=ranks, executor=self.rank_executor)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "newest":  # listed only while there is a newer trace to open
            return self.following is not None and self.following.ready
        return True

    async def action_newest(self) -> None:
        """F (--follow): the newest trace, at the step and place shown; for a rank folder, the
        rank table again over each rank's newest trace (for a folder that was one trace when
        the viewer started and now holds a job's ranks: their table)."""
        if self.following is None:
            return
        became = self.ranks is None and self.pair is None and self.following.take_ranks()
        if became:  # the job's ranks have written theirs
            self.ranks = self.following.shown_ranks
        if self.ranks is not None:
            ranks = self.ranks if became else self.following.ranks()
            if ranks is not None:
                if self._rank_screen is not None:  # a rank's timeline: back to its table
                    await self._rank_screen.come_back()
                self.ranks, self._rank_screen = ranks, None
                self.clear_notifications()
                await self.switch_screen(LoadScreen(self._load(ranks.folder, ranks)))
            return
        path = self.following.take()
        if path is None:
            return
        self.clear_notifications()  # "New: ... F opens the newest" is done
        self.following.leaving(self.screen)
        self.shown_as = None
        await self.switch_screen(LoadScreen(self._load(str(path))))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.screen))

    async def action_quit(self) -> None:
        self.cancelled.set()  # a load in progress stops at its next chunk
        self.exit()

    async def on_load_screen_failed(self, message: LoadScreen.Failed) -> None:
        if self._rank_screen is not None:  # one rank failed: the others still show
            await self._rank_screen.come_back()
            self.notify(message.error, severity="error", timeout=8, markup=False)
            return
        self.load_error = message.error
        self.exit(return_code=1)

    # --- what was loaded, on its screen -------------------------------------------------

    async def on_load_screen_loaded(self, message: LoadScreen.Loaded) -> None:
        trace, rank, side = message.trace, message.rank, message.side
        shown_as = self.shown_as
        if self.pair is not None:
            shown_as = f"{SIDES[side]} · {self.shown_as or self.path if side == 0 else self.new}"
        elif rank is not None and self._rank_screen is not None:
            shown_as = self._rank_screen.rank_title(rank)
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
        if self.following is not None and self.following.arrived(screen):
            self.sub_title = printable(trace.path)
        if rank is not None and self._rank_screen is not None:
            window, at_collective = self._rank_screen.arrival()
            if window is not None:
                screen.show_time(window)
            if at_collective:
                screen.select_collective()

    def on_load_screen_pair_diffed(self, message: LoadScreen.PairDiffed) -> None:
        assert self.pair is not None
        self.pair.changes = message.changes
        self.notify("NEW is loaded: o shows it, D shows what changed.", timeout=4)

    async def on_load_screen_ranks_loaded(self, message: LoadScreen.RanksLoaded) -> None:
        assert self.ranks is not None
        report, failed, load = message.report, message.failed, self._load(self.ranks.folder)
        self._rank_screen = RankScreen(self.ranks, report, failed, load)
        await self.switch_screen(self._rank_screen)

    # --- moving between the screens -------------------------------------------------------

    async def on_trace_screen_other_rank_wanted(self, message: TraceScreen.OtherRankWanted) -> None:
        if self._rank_screen is not None and self.rank is not None:
            await self._rank_screen.step(message.step, message.window_ns)

    async def show_other_trace(self) -> None:
        """The other trace of the pair, at the same place in the same step; the diff pane goes
        with the user, as it was left (`o`, screens.trace.PairSwitch)."""
        here = self.screen
        if not isinstance(here, TraceScreen) or self.pair is None:
            return
        there = self._sides.get(SIDES[1 - here.side])
        if there is None:
            here.timeline.say("NEW is still loading.")
            return
        await self.switch_mode(SIDES[there.side])
        self.sub_title = printable(there.shown_as or "")
        await there.shown_after(here)
