"""SliceDetails: everything about the selected slice or idle gap, as plain text."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.model.analysis.gaps import Gaps
from tui.model.present.details import counter_details, gap_details, slice_details
from tui.model.text import shown
from tui.model.trace import Trace

HINT = "Select a slice (arrows, click) or an idle gap (g) to see its details."


class SliceDetails(Static):
    """Label/value lines; nothing from the trace is read as markup."""

    def __init__(self) -> None:
        super().__init__(Text(HINT), expand=True)

    def show_slice(self, trace: Trace, row: int) -> None:
        self._show(slice_details(trace, row))

    def show_gap(self, trace: Trace, gaps: Gaps, index: int) -> None:
        self._show(gap_details(trace, gaps, index))

    def show_counter(self, trace: Trace, counter: int, window: tuple[int, int]) -> None:
        self._show(counter_details(trace, counter, window))

    def clear(self) -> None:
        self.update(Text(HINT))

    def _show(self, pairs: list[tuple[str, str]]) -> None:
        width = max(len(label) for label, _ in pairs)
        text = Text()
        for i, (label, value) in enumerate(pairs):
            if i:
                text.append("\n")
            text.append(f"{label:<{width}}  ", style="bold")
            text.append(shown(value))
        self.update(text)
