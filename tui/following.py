"""`trace-tui --follow DIR`: the folder a running job writes traces into, looked at every few
seconds off the event loop; each new complete trace is said in one line, and `F` opens it (the
app's action), at the same step and place as the trace shown."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace
from textual.app import App
from textual.screen import Screen
from textual.timer import Timer

from tui.model.analysis.diff import aligned_window
from tui.model.ingest.rank_folder import RankFiles, rank_files, rank_of
from tui.model.ingest.watch import Watch
from tui.model.present.navigate import within
from tui.model.text import printable
from tui.model.trace import Trace
from tui.screens.trace import TraceScreen


class Following:
    """What the app follows: a folder's newest trace, or its ranks' newest traces."""

    def __init__(
        self,
        app: App[None],
        folder: str,
        interval: float,
        ranks: RankFiles | None = None,
        watch: Watch | None = None,
    ) -> None:
        self.app, self.folder, self.interval = app, Path(folder), interval
        # The command's, when it looked already (a watch parses the newest trace through).
        self.watch = watch if watch is not None else Watch(self.folder)
        self.newer: list[Path] = []  # complete since the last `F`, oldest first
        # A rank folder: the rank set shown, each rank's newer complete traces in the order
        # written, and the next set once every rank has one. Ranks write theirs one after
        # another, and some may be a round ahead: the set is each rank's k-th newer trace, k
        # the rounds every rank has finished (a table over two runs' traces would mix steps).
        self.shown_ranks = ranks
        self.per_rank: dict[int, list[Path]] = {}
        self.round: RankFiles | None = None
        self._timer: Timer | None = None
        self._left: tuple[Trace, tuple[int, int]] | None = None  # the trace and window of `F`

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
        ranked = [(rank_of(path), path) for path in found]
        self.app.call_from_thread(self._found_ranks, found, ranked)

    def _found_ranks(self, found: list[Path], ranked: list[tuple[int | None, Path]]) -> None:
        self.newer += found
        shown = self.shown_ranks
        if shown is None:
            return
        for rank, path in ranked:
            if rank in shown.files:
                self.per_rank.setdefault(rank, []).append(path)
        rounds = min(len(self.per_rank.get(rank, ())) for rank in shown.files)
        of = len(shown.files)
        if rounds:
            files = {rank: self.per_rank[rank][rounds - 1] for rank in shown.files}
            # older now: those shown, and each rank's rounds before the one opened
            self.round = replace(shown, files=files, older=shown.older + of * rounds)
            said = f"A newer trace for every rank ({of}). F opens them."
        else:
            fresh = sum(rank in self.per_rank for rank in shown.files)
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

    def take_ranks(self) -> bool:
        """Whether the folder followed as one trace now holds one job's ranks (the viewer was
        started before they wrote theirs); if so, they are followed as ranks from now on."""
        if self.shown_ranks is not None:
            return False
        found = rank_files(self.folder)
        if found is None or found.mixed is not None:
            return False
        self.shown_ranks, self.per_rank, self.round = found, {}, None
        self.newer.clear()
        return True

    def ranks(self) -> RankFiles | None:
        """The ranks' newer traces, once every rank has one (a rank folder), now to be shown:
        the traces of later rounds stay, for the next `F`."""
        whole, self.round = self.round, None
        if whole is not None:
            for rank, path in whole.files.items():
                taken = self.per_rank[rank]
                del taken[: taken.index(path) + 1]
            self.shown_ranks = whole
            self.newer.clear()
        return whole

    def leaving(self, screen: Screen[object]) -> None:
        """`F` on `screen`: the newer trace opens at the step and place shown there."""
        if isinstance(screen, TraceScreen):
            self._left = (screen.trace, screen.timeline.window)

    def arrived(self, screen: TraceScreen) -> bool:
        """The newer trace is shown on `screen`: at the step and place left (once), if any."""
        if self._left is None:
            return False
        (before, window), self._left = self._left, None
        # within the newer trace: a shorter one is not drawn as a dot in the older's span
        aligned = aligned_window(before, screen.trace, window)
        screen.timeline.set_window(within(aligned, (0, max(screen.trace.span_ns, 1))))
        return True
