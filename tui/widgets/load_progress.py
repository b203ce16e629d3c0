"""LoadProgress: bytes read and events decoded while a trace loads."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

from tui.model.text import printable


class LoadProgress(Vertical):
    """What the loader has done so far: told before it is mounted too (the loading screen shows
    it only once a load takes a moment), it shows the latest once it is."""

    def __init__(self, path: str, ranks: int | None = None) -> None:
        """`ranks`: a rank set's, summarised rather than one trace read."""
        super().__init__()
        self.path, self.ranks = path, ranks
        self._latest: tuple[int, int, str] | None = None  # done, total, and the line under

    def on_mount(self) -> None:
        if self._latest is not None:
            self._draw(*self._latest)
        # The bar's time left needs two samples a second apart: a rank set's first would
        # otherwise come when its first rank finishes, and the second with its last (the ranks
        # finish together, one a worker), so it never showed one.
        elif self.ranks is not None:
            self._draw(0, self.ranks, _ranks_done(0, self.ranks))

    def compose(self) -> ComposeResult:
        yield Static(
            Text(f"Loading {printable(self.path)}   (q or ctrl+c cancels)"), id="load-title"
        )
        yield ProgressBar(total=100, show_eta=True, id="load-bar")
        yield Static(Text(""), id="load-detail")

    def update_ranks(self, done: int, total: int) -> None:
        self._show(done, total, _ranks_done(done, total))

    def update_progress(self, done: int, total: int, events: int) -> None:
        self._show(done, total, f"{done / 1e6:,.1f} of {total / 1e6:,.1f} MB, {events:,} events")

    def _show(self, done: int, total: int, detail: str) -> None:
        self._latest = (done, total, detail)  # drawn by on_mount if not composed yet
        self._draw(done, total, detail)

    def _draw(self, done: int, total: int, detail: str) -> None:
        # query, not query_one: nothing before compose, nor after a screen leaving as the load
        # ends has pruned them
        for bar in self.query(ProgressBar):
            bar.update(total=max(total, 1), progress=done)
        for line in self.query("#load-detail").results(Static):
            line.update(Text(detail))


def _ranks_done(done: int, total: int) -> str:
    return f"{done:,} of {total:,} ranks summarised"
