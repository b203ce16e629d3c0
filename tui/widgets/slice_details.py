"""SliceDetails: everything about the selected slice or idle gap, as plain text."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.model.analysis.gaps import Gaps
from tui.model.analysis.verdict import Verdict
from tui.model.present.details import counter_details, gap_details, slice_details
from tui.model.text import shown
from tui.model.trace import Trace

HINT = "Select a slice (arrows, click) or an idle gap (g) to see its details; ? for the keys."
KEY_WIDTH = 16  # the label column keeps its width from one selection to the next


class SliceDetails(Static):
    """Label/value lines; nothing from the trace is read as markup."""

    def __init__(self, verdict: Verdict | None = None) -> None:
        super().__init__(expand=True)
        self.verdict = verdict
        self.clear()

    def show_slice(self, trace: Trace, row: int) -> None:
        self._show(slice_details(trace, row))

    def show_gap(self, trace: Trace, gaps: Gaps, index: int) -> None:
        self._show(gap_details(trace, gaps, index))

    def show_counter(self, trace: Trace, counter: int, window: tuple[int, int]) -> None:
        self._show(counter_details(trace, counter, window))

    def clear(self) -> None:
        """With nothing selected: the verdict on the profiled steps, and how to go on."""
        text = Text()
        if self.verdict is not None:
            text.append(f" {self.verdict.label.upper()} ", style="bold reverse")
            text.append(f"  {shown(self.verdict.reason)}\n")
        text.append(HINT, style="dim")
        self.update(text)

    def _show(self, pairs: list[tuple[str, str]]) -> None:
        text = Text()
        for i, (label, value) in enumerate(pairs):
            if i:
                text.append("\n")
            cut = label if len(label) <= KEY_WIDTH else label[: KEY_WIDTH - 1] + "…"
            text.append(f"{shown(cut):<{KEY_WIDTH}}  ", style="bold")
            text.append(shown(value))
        self.update(text)
