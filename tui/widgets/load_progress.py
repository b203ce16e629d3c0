"""LoadProgress: bytes read and events decoded while a trace loads."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

from tui.model.text import printable


class LoadProgress(Vertical):
    """What the loader has done so far."""

    def __init__(self, path: str, ranks: int | None = None) -> None:
        """`ranks`: a rank set's, summarised rather than one trace read."""
        super().__init__()
        self.path, self.ranks = path, ranks

    def on_mount(self) -> None:
        # The bar's time left needs two samples a second apart: a rank set's first would
        # otherwise come when its first rank finishes, and the second with its last (the ranks
        # finish together, one a worker), so it never showed one.
        if self.ranks is not None:
            self.update_ranks(0, self.ranks)

    def compose(self) -> ComposeResult:
        yield Static(
            Text(f"Loading {printable(self.path)}   (q or ctrl+c cancels)"), id="load-title"
        )
        yield ProgressBar(total=100, show_eta=True, id="load-bar")
        yield Static(Text(""), id="load-detail")

    def update_ranks(self, done: int, total: int) -> None:
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)
        self.query_one("#load-detail", Static).update(
            Text(f"{done:,} of {total:,} ranks summarised")
        )

    def update_progress(self, done: int, total: int, events: int) -> None:
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)
        detail = f"{done / 1e6:,.1f} of {total / 1e6:,.1f} MB, {events:,} events"
        self.query_one("#load-detail", Static).update(Text(detail))
