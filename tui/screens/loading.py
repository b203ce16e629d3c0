"""LoadScreen: loads a trace (or summarises every rank of a rank set) in a thread and shows the
progress; what it loaded goes to the app as messages, which shows it on its own screen. q
cancels."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.binding import BindingType
from textual.message import Message
from textual.screen import Screen

from tui.model.analysis.diff import TraceDiff, diff
from tui.model.analysis.rank_compare import RankReport, compare
from tui.model.analysis.rank_stats import RankFailed, RankStats
from tui.model.analysis.steps import launch_window, profiled_window
from tui.model.analysis.verdict import Verdict, judge
from tui.model.errors import TraceError
from tui.model.ingest.cache import ModelCache
from tui.model.ingest.rank_folder import RankFiles
from tui.model.passes import load_trace
from tui.model.passes.ranks import summarise_ranks
from tui.model.trace import Trace
from tui.screens.keys import COMMON
from tui.widgets.key_footer import KeyFooter
from tui.widgets.load_progress import LoadProgress

_PROGRESS_EVERY_S = 0.25
# A trace loaded sooner than this never shows its progress: no flash of a bar on a small or
# cached trace, and no layout and frames spent drawing one. A rank set's shows at once: its time
# left is measured from the first sample, which must be the start.
SHOW_AFTER_S = 0.15


class LoadCancelled(Exception):
    """Raised in the loading thread to stop it when the user quits."""


@dataclass(frozen=True)
class Load:
    """What to load: a trace (`rank`: which of a rank set), a pair (`new` loads after `path`,
    and what changed between them), or with `ranks` the summary of every rank."""

    path: str
    cache: ModelCache | None
    workers: int | None  # processes that read the rank set, or one big trace
    cancelled: threading.Event  # the user quit: the thread stops at its next chunk
    rank: int | None = None
    new: str | None = None
    ranks: RankFiles | None = None
    executor: Executor | None = None  # where the rank set is summarised (--cluster)


class LoadScreen(Screen[None]):
    """Shown while `load` loads; the app replaces it with what it loaded."""

    BINDINGS: ClassVar[list[BindingType]] = [*COMMON]
    HELP_TITLE = "Loading"

    class Loaded(Message):
        """A trace has loaded (`rank`: which of a rank set; `side`: which of a pair)."""

        def __init__(self, trace: Trace, verdict: Verdict | None, rank: int | None, side: int):
            super().__init__()
            self.trace, self.verdict, self.rank, self.side = trace, verdict, rank, side

    class Failed(Message):
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

    class Progressed(Message):
        def __init__(self, done: int, total: int, events: int) -> None:
            super().__init__()
            self.done, self.total, self.events = done, total, events

    def __init__(self, load: Load) -> None:
        super().__init__()
        self.load = load
        self._last_progress = 0.0
        ranks = load.ranks
        self._bar = LoadProgress(load.path, None if ranks is None else len(ranks.files))

    def on_mount(self) -> None:
        if self.load.ranks is not None:
            self._show_progress()
            self.summarise(self.load.ranks)
        else:
            self.set_timer(SHOW_AFTER_S, self._show_progress)
            self.read()

    def _show_progress(self) -> None:
        # Not replaced by what it loaded as the timer fired, nor left behind a pair's BASE
        # (where it goes on loading NEW unseen).
        if self.is_attached and self in self.app.screen_stack:
            self.mount_all([self._bar, KeyFooter()])

    @work(thread=True, exclusive=True, exit_on_error=False)
    def summarise(self, ranks: RankFiles) -> None:
        """Summarise every rank off the event loop (in worker processes for a big set)."""

        def done(finished: int, total: int) -> None:
            if self.load.cancelled.is_set():
                raise LoadCancelled
            self.app.call_from_thread(self._bar.update_ranks, finished, total)

        use_cache = self.load.cache is not None
        try:
            results = summarise_ranks(
                ranks, self.load.workers, use_cache, self.load.executor, done=done
            )
        except LoadCancelled:
            return
        except Exception as e:  # a bug: one line on exit, never a load that waits forever
            self.post_message(
                self.Failed(f"{ranks.folder}: cannot summarise its ranks ({type(e).__name__}: {e})")
            )
            return
        stats = [r for r in results if isinstance(r, RankStats)]
        failed = [r for r in results if isinstance(r, RankFailed)]
        if len(stats) < 2:
            errors = "; ".join(f.error for f in failed)
            self.post_message(
                self.Failed(f"{ranks.folder}: fewer than two ranks could be read: {errors}")
            )
            return
        report = compare(stats)
        report.notes[:0] = ranks.notes()
        self.post_message(self.RanksLoaded(report, failed))

    @work(thread=True, exclusive=True, exit_on_error=False)
    def read(self) -> None:
        """Load the trace; for a pair, BASE then NEW and what changed between them. Only
        messages cross back to the event loop."""
        path = self.load.path
        try:
            trace = self._read(path)
            self.post_message(self.Loaded(trace, _verdict(trace), self.load.rank, 0))
            if self.load.new is not None:
                new = self._read(self.load.new)
                self.post_message(self.Loaded(new, _verdict(new), None, 1))
                self.post_message(self.PairDiffed(diff(trace, new)))
        except LoadCancelled:
            return
        except TraceError as e:
            self.post_message(self.Failed(str(e)))
        except Exception as e:  # a bug: one line on exit, never a traceback on screen
            self.post_message(
                self.Failed(
                    f"{path}: cannot load ({type(e).__name__}: {e}); please report this with "
                    "the file"
                )
            )

    def _read(self, path: str) -> Trace:
        load = self.load
        trace = load_trace(path, progress=self._progress, cache=load.cache, workers=load.workers)
        trace.args_reader.open()  # here, not on the first lookup in the UI thread
        return trace

    def _progress(self, done: int, total: int, events: int) -> None:
        if self.load.cancelled.is_set():
            raise LoadCancelled
        now = time.monotonic()
        if now - self._last_progress >= _PROGRESS_EVERY_S:
            self._last_progress = now
            self.post_message(self.Progressed(done, total, events))

    def on_load_screen_progressed(self, message: Progressed) -> None:
        message.stop()
        self._bar.update_progress(message.done, message.total, message.events)


def _verdict(trace: Trace) -> Verdict | None:
    """The verdict on the profiled steps, shown while nothing is selected (None when the
    trace has nothing to judge it on)."""
    if not len(trace.slices):
        return None
    return judge(trace, *profiled_window(trace), launch_window(trace))
