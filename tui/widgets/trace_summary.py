"""TraceSummary: the file, its span, slice count and GPUs, in one or two lines."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.model.text import printable
from tui.model.timescale import format_duration
from tui.model.trace import Trace


class TraceSummary(Static):
    """A header line for a loaded trace (plain text: nothing from the file is markup)."""

    DEFAULT_CSS = """
    TraceSummary { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, trace: Trace) -> None:
        # One line each, cut with an ellipsis: a wrapped title costs the timeline a row.
        text = Text(
            "\n".join(printable(line) for line in describe(trace).splitlines()),
            no_wrap=True,
            overflow="ellipsis",
        )
        super().__init__(text)


def describe(trace: Trace) -> str:
    """`file · 12.3 ms · 4,567 slices · NVIDIA H100` plus what was skipped."""
    parts = [
        trace.path.rsplit("/", 1)[-1],
        format_duration(trace.span_ns),
        f"{len(trace.slices):,} slices",
    ]
    gpus = [str(d.get("name")) for d in trace.devices if d.get("name")]
    if gpus:
        parts.append(", ".join(sorted(set(gpus))) + (f" x{len(gpus)}" if len(gpus) > 1 else ""))
    if trace.format.truncated:
        parts.append("TRUNCATED")
    if trace.format.chosen_from:
        parts.append(f"newest of {trace.format.chosen_from}")
    line = " · ".join(parts)
    skipped = sum(trace.skipped.values())
    if skipped:
        reasons = ", ".join(f"{n:,} {r}" for r, n in trace.skipped.most_common(3))
        line += f"\nskipped {skipped:,} event{'s' if skipped != 1 else ''} ({reasons})"
    return line
