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

    def __init__(self, app: App[None], folder: str, interval: float = INTERVAL_S) -> None:
        self.app, self.folder, self.interval = app, Path(folder), interval
        self.watch = Watch(self.folder)
        self.newer: list[Path] = []  # complete since the last `F`, oldest first
        self._timer: Timer | None = None

    def start(self) -> None:
        self._timer = self.app.set_interval(self.interval, self._look)

    def _look(self) -> None:
        self.app.run_worker(self._poll, thread=True, exclusive=True, group="follow")

    def _poll(self) -> None:
        found = self.watch.poll()
        if found:
            self.app.call_from_thread(self._found, found)

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
        """The ranks' newest complete traces (for a rank folder), the found ones taken."""
        self.newer.clear()
        return rank_files(self.folder, self.watch.unsettled())
