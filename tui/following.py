"""`trace-tui --follow DIR`: the folder a running job writes traces into, looked at every few
seconds off the event loop; each new complete trace is said in one line, and `F` opens it (the
app's action), at the same step and place as the trace shown."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.timer import Timer

from tui.model.ingest.rank_folder import RankFiles, rank_files
from tui.model.ingest.watch import Watch
from tui.model.text import printable

INTERVAL_S = 2.0


class Following:
    """What the app follows: a folder's newest trace, or its ranks' newest traces."""

    def __init__(
        self,
        app: App[None],
        folder: str,
        interval: float = INTERVAL_S,
        ranks: RankFiles | None = None,
    ) -> None:
        self.app, self.folder, self.interval = app, Path(folder), interval
        self.watch = Watch(self.folder)
        self.newer: list[Path] = []  # complete since the last `F`, oldest first
        # A rank folder: the rank set shown, and the next one once every rank of it has a
        # newer complete trace (ranks write theirs one after another: a table over some old
        # and some new traces would mix two runs' steps).
        self.shown_ranks = ranks
        self.round: RankFiles | None = None
        self._timer: Timer | None = None

    def start(self) -> None:
        self._timer = self.app.set_interval(self.interval, self._look)

    def _look(self) -> None:
        self.app.run_worker(self._poll, thread=True, exclusive=True, group="follow")

    @property
    def ready(self) -> bool:
        """Whether `F` has something to open."""
        return self.round is not None if self.shown_ranks is not None else bool(self.newer)

    def _poll(self) -> None:
        found = self.watch.poll()
        if not found:
            return
        if self.shown_ranks is None:
            self.app.call_from_thread(self._found, found)
            return
        latest = rank_files(self.folder, self.watch.unsettled())
        shown = self.shown_ranks.files
        fresh = sum(latest is not None and latest.files.get(r, p) != p for r, p in shown.items())
        whole = latest if fresh == len(shown) else None
        self.app.call_from_thread(self._found_ranks, found, whole, fresh)

    def _found_ranks(self, found: list[Path], whole: RankFiles | None, fresh: int) -> None:
        self.newer += found
        self.round = whole
        of = len(self.shown_ranks.files) if self.shown_ranks is not None else fresh
        if whole is not None:
            said = f"A newer trace for every rank ({of}). F opens them."
        else:
            said = f"Newer traces for {fresh} of {of} ranks; F waits for the rest."
        self.app.notify(said, timeout=10, markup=False)
        self.app.refresh_bindings()

    def _found(self, found: list[Path]) -> None:
        self.newer += found
        names = ", ".join(printable(p.name) for p in found[-3:])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        self.app.notify(f"New: {names}{more}. F opens the newest.", timeout=10, markup=False)
        self.app.refresh_bindings()  # F now acts

    def take(self) -> Path | None:
        """The newest trace found, now to be shown (None: none since the last)."""
        newest = self.newer[-1] if self.newer else None
        self.newer.clear()
        return newest

    def ranks(self) -> RankFiles | None:
        """The ranks' newer traces, once every rank has one (a rank folder), now to be shown."""
        whole, self.round = self.round, None
        if whole is not None:
            self.shown_ranks = whole
            self.newer.clear()
        return whole
