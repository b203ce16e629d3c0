"""LaneTable: every lane of the trace, grouped by process, with its size and depth."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from tui.model import Trace
from tui.model.text import printable


class LaneTable(DataTable[Text]):
    """Processes, their CPU threads and GPU streams, in display order."""

    def __init__(self, trace: Trace) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True)
        self.trace = trace

    def on_mount(self) -> None:
        self.add_columns("process", "lane", "kind", "slices", "depth")
        for lane in self.trace.lanes:
            process = self.trace.processes[lane.process]
            self.add_row(
                Text(printable(process.name)),
                Text(printable(lane.name)),
                Text(lane.kind.upper()),
                Text(f"{lane.slice_count:,}", justify="right"),
                Text(str(lane.levels), justify="right"),
                key=str(lane.index),
            )
