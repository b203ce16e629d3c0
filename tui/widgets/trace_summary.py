"""TraceSummary: the file, its span, slice count, health, the first next step and GPUs, in one
or two lines."""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from tui.model.analysis.advice import advice_for, headline
from tui.model.analysis.health import health
from tui.model.text import printable
from tui.model.timescale import format_duration
from tui.model.trace import Trace


class TraceSummary(Widget):
    """A header line for a loaded trace (plain text: nothing from the file is markup)."""

    DEFAULT_CSS = """
    TraceSummary { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, trace: Trace, shown_as: str | None = None) -> None:
        self.trace, self.shown_as = trace, shown_as
        super().__init__()
        self._shown = self._text(None)

    def _text(self, health_line: str | None, next_line: str | None = None) -> Text:
        # One line each, cut with an ellipsis: a wrapped title costs the timeline a row.
        text = describe(self.trace, self.shown_as, health_line, next_line)
        return Text(text, no_wrap=True, overflow="ellipsis")

    def render(self) -> Text:
        return self._shown

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return _lines(self._shown)

    def _show(self, text: Text) -> None:
        """The line again, laid out again only if it has gained or lost a line (a layout of the
        screen costs as much as a frame)."""
        taller = _lines(text) != _lines(self._shown)
        self._shown = text
        self.refresh(layout=taller)

    def on_mount(self) -> None:
        """The trace's health (torch's checks read some args), then its first next step: in a
        thread, each shown when found."""

        def check() -> None:
            try:
                line = health(self.trace).line
            except Exception as e:  # a bug in a check: the header says so, the rest works
                line = f"health: not checked ({type(e).__name__})"
            try:
                self.app.call_from_thread(self._show, self._text(line))
            except RuntimeError:  # the app closed meanwhile
                return
            try:
                advice = advice_for(self.trace)
                # The key first: a narrow terminal cuts the line's end.
                first = f"next (A): {headline(advice[0])}" if advice else None
            except Exception as e:  # as for the health checks
                first = f"next steps: not found ({type(e).__name__})"
            try:
                self.app.call_from_thread(self._show, self._text(line, first))
            except RuntimeError:
                return

        self.run_worker(check, thread=True, group="health", exit_on_error=False)


def describe(
    trace: Trace,
    shown_as: str | None = None,
    health_line: str | None = None,
    next_line: str | None = None,
) -> str:
    """`file · next (A): data loading, up to 59 ms/step · 12.3 ms · 4,567 slices · health: ok ·
    NVIDIA H100` plus what was skipped: the first next step, once found, right after the file
    (what to do matters most and a narrow terminal cuts the end); the health line before the
    device names, which may be long."""
    parts = [
        shown_as or trace.path.rsplit("/", 1)[-1],
        *([next_line] if next_line is not None else []),
        format_duration(trace.span_ns),
        f"{len(trace.slices):,} slices",
        *([health_line] if health_line is not None else []),
    ]
    gpus = [d for d in trace.devices if d.get("name")]
    # Kineto lists every GPU of the node; a rank's trace uses one of them.
    used = {trace.lanes[i].pid for p in trace.processes if p.is_device for i in p.lanes}
    shown = [d for d in gpus if d.get("id") in used] or gpus
    if shown:
        names = ", ".join(sorted({str(d["name"]) for d in shown}))
        count = f" x{len(shown)}" if len(shown) > 1 else ""
        node = f" (of {len(gpus)} in the node)" if len(shown) < len(gpus) else ""
        parts.append(names + count + node)
    if trace.format.truncated:
        parts.append("TRUNCATED")
    if trace.format.chosen_from:
        parts.append(f"newest of {trace.format.chosen_from}")
    # Each part shown with its control characters escaped: a newline in a file or device name
    # must not break the header's line.
    line = " · ".join(printable(part) for part in parts)
    skipped = sum(trace.skipped.values())
    if skipped:
        reasons = ", ".join(f"{n:,} {r}" for r, n in trace.skipped.most_common(3))
        line += "\n" + printable(
            f"skipped {skipped:,} event{'s' if skipped != 1 else ''} ({reasons})"
        )
    return line


def _lines(text: Text) -> int:
    return text.plain.count("\n") + 1
