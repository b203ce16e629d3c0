"""StatsPane: the summary strip with the verdict, a name filter, and the op or kernel table."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from tui.model.analysis.op_shapes import op_shapes
from tui.model.analysis.ops import OpStat, op_rows
from tui.model.analysis.roofline import Roofline
from tui.model.analysis.scope import Scope
from tui.model.present.names import shown_names
from tui.model.present.report import overlapping_steps, strip_steps, summary_lines
from tui.model.present.roofline_report import summary_roofline, verdict_note
from tui.model.present.scopes import next_scope, scope_named
from tui.model.present.tables import default_sort, scope_report, table_for
from tui.model.text import counted, printable
from tui.model.timescale import format_duration
from tui.model.trace import Trace
from tui.screens.error import guarded
from tui.widgets.focus import focus_now, is_focused
from tui.widgets.key_footer import TextBox
from tui.widgets.pane import Pane, PaneContext, SlicesChosen
from tui.widgets.stats_table import StatsTable

ROOFLINE_KEY = "roofline line"  # the trace's derived data: (line, roofline) once found
ROOFLINE_WAIT_S = 0.03  # how long the table's first build waits for the roofline's columns


@dataclass(frozen=True)
class PaneState:
    """What the user chose in the pane: opened again, it shows the same."""

    kernels: bool
    scope_name: str
    sort: tuple[str, int, bool]  # key, column pressed, descending
    marked: tuple[int, int] | None
    by_shape: bool = False
    frames: bool = False
    before_range: str = "trace"  # the scope a marked range took over, back when it is cleared


class StatsPane(Pane):
    """The table users know from key_averages(), rebuilt from the file, tied to the timeline."""

    DEFAULT_CSS = """
    StatsPane { height: 50%; min-height: 15; border-top: solid $primary; }
    StatsPane > #strip-box { height: auto; max-height: 3; background: $boost;
        overflow-y: hidden; scrollbar-size-vertical: 1; }
    StatsPane > #strip-box.open { max-height: 80%; overflow-y: auto; }
    StatsPane #strip { height: auto; padding: 0 1; }
    StatsPane > #filter { height: 1; border: none; padding: 0 1; }
    StatsPane > #empty { height: auto; padding: 0 1; color: $warning; display: none; }
    StatsPane > #empty.shown { display: block; }
    StatsPane > StatsTable { height: 1fr; min-height: 5; }
    """
    FOCUS: ClassVar[str] = "#stats"  # what takes the keys when the pane opens
    HELP_TITLE = "Stats pane"  # its section of the help
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "toggle_kernels", "Ops/kernels"),
        Binding("S", "toggle_shapes", "Ops by input shape"),
        Binding("v", "next_scope", "Stats scope"),
        Binding("p", "toggle_frames", "Python frames", show=False),
        Binding("i", "toggle_strip", "Summary in full"),
        Binding("slash", "filter", "Filter the table", show=False),
        Binding(
            "escape", "leave", "Close the pane (from the filter: back to the table)", show=False
        ),
        # Tab stays in the pane, between its table and its filter: letters typed after a Tab
        # land where the user looks, never on the timeline as commands.
        Binding("tab,shift+tab", "other_part", "Table / filter", show=False),
    ]

    @classmethod
    def opened(cls, at: PaneContext) -> StatsPane | str:
        return cls(at.trace, at.window, at.selected, at.marked, _kept(at.last))

    def __init__(
        self,
        trace: Trace,
        window: tuple[int, int],
        selected: int = -1,
        marked: tuple[int, int] | None = None,
        last: PaneState | None = None,
    ) -> None:
        super().__init__()
        self.trace = trace
        self.last = last  # how the pane was left, to open it so again
        self.kernels = last.kernels if last is not None else False
        self.by_shape = last.by_shape if last is not None else False
        # The op table's Python-frame rows (with_stack=True), counted but not listed unless asked.
        self.frames = last.frames if last is not None else False
        self.reading_shapes = False  # every op's shapes are being read (in a thread)
        self.scope_name = last.scope_name if last is not None else "trace"
        self.before_range = last.before_range if last is not None else "trace"
        self.scope_label = "trace"
        self.scope = Scope()
        self.window, self.selected, self.marked = window, selected, marked  # for `v`
        self.roof_line: str | None = None  # how close to the hardware (found in a thread)
        self.roof: Roofline | None = None  # its numbers, for the table's columns

    def compose(self) -> ComposeResult:
        # Open (`i`), the strip scrolls: many steps, or a short terminal, overflow it.
        yield VerticalScroll(Static(Text(""), id="strip"), id="strip-box", can_focus=False)
        # Tab back into the filter edits it: it does not select (and so replace) what it holds.
        yield TextBox(
            [("enter", "Back to the table (the filter stays)"), ("escape", "Back")],
            placeholder="filter names",
            id="filter",
            select_on_focus=False,
        )
        yield Static(id="empty")
        yield StatsTable(shown_names(self.trace), id="stats")

    @guarded
    async def on_mount(self) -> None:
        if not self.query(StatsTable):  # closed again (`t t`) before it was shown
            return
        await self._find_roofline()  # before the first build: there at once if found quickly
        if not self.query(StatsTable):  # closed while it waited
            return
        last = self.last
        if self.marked is not None and (last is None or last.marked != self.marked):
            self._scope_to("range")  # opened to look at the range just marked
        elif last is not None:
            spec = table_for(last.kernels, last.by_shape)
            if any(c.key == last.sort[0] for c in spec.columns):  # a sort of that table
                table = self.query_one(StatsTable)
                table.table_name = spec.name
                table.sort_key, table.sort_column, table.descending = last.sort
            # A range cleared while the pane was closed: back to the scope it took over.
            gone = last.scope_name == "range" and self.marked is None
            self._scope_to(self.before_range if gone else last.scope_name)
        else:
            self.rebuild()
        if self.by_shape and not self.kernels and "op_shapes" not in self.trace.derived:
            self._read_shapes()

    async def _find_roofline(self) -> None:
        """The Roofline line and the table's GFLOPs, TFLOP/s and % of roof read the shapes of
        every modelled call (up to about a second): in a thread, once per trace. Waited for up
        to ROOFLINE_WAIT_S, so that the table's first build has them (a real trace's come in
        5-25 ms); later, they are shown when found."""
        kept = self.trace.derived.get(ROOFLINE_KEY)
        if kept is not None:
            self.roof_line, self.roof = kept
            return

        def find() -> None:
            found = summary_roofline(self.trace)
            self.trace.derive(ROOFLINE_KEY, lambda: found)
            try:
                self.app.call_from_thread(self._show_roofline, *found)
            except RuntimeError:  # the app closed meanwhile
                return

        worker = self.run_worker(find, thread=True, group="roofline", exit_on_error=False)
        waiting = asyncio.ensure_future(worker.wait())
        # Found late, failed (a bug in a model) or cancelled as the pane closed: read here, not
        # logged as an exception nobody retrieved; the table is built without them meanwhile.
        waiting.add_done_callback(lambda done: done.cancelled() or done.exception())
        await asyncio.wait([waiting], timeout=ROOFLINE_WAIT_S)

    def _show_roofline(self, line: str | None, roof: Roofline | None) -> None:
        self.roof_line, self.roof = line, roof
        if self._built() is not None and (line is not None or (roof is not None and roof.rows)):
            self.rebuild(keep_place=True)

    def _built(self) -> StatsTable | None:
        """The table, once first built (it waits for the roofline a moment, or is closing)."""
        table = next(iter(self.query(StatsTable)), None)
        return table if table is not None and table.report is not None else None

    def state(self) -> PaneState:
        table = self._built()
        if table is None:  # closed before it was built (`t t`): as it was opened
            default = (default_sort(self.trace, table_for(self.kernels, self.by_shape)), -1, True)
            sort = self.last.sort if self.last is not None else default
        else:
            sort = (table.sort_key, table.sort_column, table.descending)
        return PaneState(
            self.kernels,
            self.scope_name,
            sort,
            self.marked,
            self.by_shape,
            self.frames,
            self.before_range,
        )

    def on_resize(self, event: events.Resize) -> None:
        for table in self.query(StatsTable):
            table.fit_width(event.size.width)

    def follow(
        self, window: tuple[int, int], selected: int, marked: tuple[int, int] | None
    ) -> None:
        """The timeline's view, selection and range, which the next scope is taken from; a
        newly marked range becomes the scope."""
        fresh = marked is not None and marked != self.marked
        self.window, self.selected, self.marked = window, selected, marked
        if fresh:
            self._scope_to("range")
        elif marked is None and self.scope_name == "range":  # the range was cleared
            self._scope_to(self.before_range)

    def _scope_to(self, name: str) -> None:
        if name == "range" and self.scope_name != "range":
            self.before_range = self.scope_name
        picked = scope_named(self.trace, name, self.window, self.selected, self.marked)
        self.scope_name, self.scope_label, self.scope = picked.name, picked.label, picked.scope
        self.rebuild()

    def action_leave(self) -> None:
        """Escape: out of the filter (keeping it) to the table, else the pane closes."""
        table = self.query_one(StatsTable)
        if is_focused(table):
            self.dismiss()
        else:
            focus_now(table)

    def action_other_part(self) -> None:
        table = self.query_one(StatsTable)
        focus_now(self.query_one("#filter", Input) if is_focused(table) else table)

    def action_toggle_strip(self) -> None:
        """The summary strip: three lines (the verdict first), or all of it, steps included."""
        self.query_one("#strip-box").toggle_class("open")

    def action_filter(self) -> None:
        """The filter, its cursor after what it holds (typing goes on, backspace takes back)."""
        field = self.query_one("#filter", Input)
        focus_now(field)
        field.cursor_position = len(field.value)

    @guarded
    def action_toggle_kernels(self) -> None:
        self.kernels = not self.kernels
        self.rebuild()

    @guarded
    def action_toggle_frames(self) -> None:
        """The op table's Python-frame rows listed, or counted only; the totals stay."""
        self.frames = not self.frames
        self.rebuild()

    @guarded
    def action_toggle_shapes(self) -> None:
        """The op table by name and input shapes (as key_averages(group_by_input_shape=True)),
        or by name again; from the kernel table, the ops by shape. Every op's shapes are read
        once, in a thread (about a second a million ops)."""
        self.by_shape = not self.by_shape or self.kernels
        self.kernels = False
        if self.by_shape and "op_shapes" not in self.trace.derived:
            self._read_shapes()
            return
        self.rebuild()

    def _read_shapes(self) -> None:
        if self.reading_shapes:
            return
        self.reading_shapes = True
        self._say_if_empty()

        def read() -> None:
            failed: Exception | None = None
            try:
                op_shapes(self.trace)
            except Exception as e:  # a bug: said in the pane, and S may try again
                failed = e
            try:
                self.app.call_from_thread(self._shapes_read, failed)
            except RuntimeError:  # the app closed meanwhile
                return

        self.run_worker(read, thread=True, group="shapes", exit_on_error=False)

    def _shapes_read(self, error: Exception | None) -> None:
        self.reading_shapes = False
        if error is None:
            self.rebuild()
            return
        self.by_shape = False
        self.rebuild()
        empty = self.query_one("#empty", Static)
        empty.update(Text(f"Could not read the input shapes ({type(error).__name__}: {error})."))
        empty.set_class(True, "shown")

    @guarded
    def action_next_scope(self) -> None:
        self._scope_to(next_scope(self.scope_name))

    def rebuild(self, keep_place: bool = False) -> None:
        """The strip and the table again; `keep_place`: the same rows, with more columns, so
        the cursor stays where it is."""
        tables = self.query(StatsTable)
        if not tables:  # the pane is closing (`t` again) while a message still reaches it
            return
        table = tables.first()
        # Until the shapes are read, the table stays by name (the strip says they are coming).
        by_shape = self.by_shape and not self.reading_shapes
        report = scope_report(
            self.trace,
            self.scope,
            self.kernels,
            roof=self.roof,
            by_shape=by_shape,
            frames=self.frames,
        )
        summary = report.summary
        pairs = dict(summary_lines(summary, report.totals))
        # What the table covers first: the three lines shown by default must say it.
        kind = "Kernels" if self.kernels else "Ops by shape" if by_shape else "Ops"
        what = f"{kind} · scope {printable(self.scope_label)}"
        if report.frames_hidden:
            what += f" · {counted(report.frames_hidden, 'Python frame')} not listed (p)"
        elif self.frames and any(isinstance(r, OpStat) and r.python for r in report.rows):
            what += " · Python frames listed (p)"
        lines = Text(f" {what} ", style="bold reverse")
        lines.append(f" {summary.verdict.label.upper()}", style="bold")
        note = verdict_note(
            summary.verdict.label, self.roof if self.scope_name == "trace" else None
        )
        if note is not None:
            lines.append(f": {note}", style="bold")
        lines.append(f"  {printable(pairs['Why'])}\n")
        lines.append(
            "(x ops/kernels, S by shape, v scope, p Python frames, i all of this, 1-9 or a "
            "header click sorts, "
        )
        lines.append("enter: longest)\n")
        shown = [(label, pairs[label]) for label in list(pairs)[2:]]
        if self.roof_line is not None and self.scope_name == "trace":
            shown.insert(0, ("Roofline", self.roof_line))
        lines.append("   ".join(f"{label}: {printable(value)}" for label, value in shown))
        if summary.steps:
            shared = overlapping_steps(summary.steps)
            steps, heading = strip_steps(summary.steps)
            lines.append(f"\n{heading}" + (f" ({shared})" if shared else "") + ": ", style="bold")
            lines.append(
                "   ".join(
                    f"{printable(s.name)} CPU {format_duration(s.dur_ns)} GPU "
                    f"{format_duration(s.verdict.evidence.launched_gpu_ns)} busy "
                    f"{s.verdict.evidence.gpu_busy:.1%} {s.verdict.label}"
                    for s in steps
                )
            )
        self.query_one("#strip", Static).update(lines)
        table.show(report, keep_place)
        self._say_if_empty()

    def _say_if_empty(self) -> None:
        """An empty table says why, and what to press instead."""
        table = self.query_one(StatsTable)
        report = table.report
        empty = self.query_one("#empty", Static)
        what = "kernels" if self.kernels else "ops"
        if self.reading_shapes:
            text = "Reading every op's input shapes (S again: back to the table by name)…"
        elif report is None or table.row_count:
            text = ""
        elif report.rows:
            text = (
                f"No {what[:-1]} name holds “{printable(table.filter_text)}” "
                f"({len(report.rows)} rows hidden): edit or clear the filter."
            )
        elif report.frames_hidden:
            text = f"Only Python frames in scope {printable(self.scope_label)}: p lists them."
        elif self.kernels and not scope_report(self.trace, Scope(), kernels=True).rows:
            text = "No GPU work in this trace (it ran on the CPU only): x shows the ops."
        else:
            text = f"No {what} in scope {printable(self.scope_label)}: v for another scope."
        empty.update(Text(text))  # the filter holds what the user typed: never markup
        empty.set_class(bool(text), "shown")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter: back to the table, the filter kept."""
        event.stop()
        focus_now(self.query_one(StatsTable))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.query_one(StatsTable).set_filter(event.value)
        self._say_if_empty()

    def on_data_table_row_highlighted(self, event: StatsTable.RowHighlighted) -> None:
        self._chosen(jump=False)

    def on_data_table_row_selected(self, event: StatsTable.RowSelected) -> None:
        self._chosen(jump=True)

    def _chosen(self, jump: bool) -> None:
        """The slices the highlighted row counts are marked; enter goes to the longest."""
        row = self.query_one(StatsTable).row_at_cursor()
        if row is None:
            return
        rows = op_rows(self.trace, row.name)
        shapes = row.shapes if isinstance(row, OpStat) else ""  # kernel rows have none
        if shapes:  # a row of the by-shape table
            found = op_shapes(self.trace)
            rows = rows[found.shape[rows] == found.texts.index(shapes)]
        # Those of its scope (a kernel's subtree: all of them).
        if not (self.kernels and self.scope.root >= 0):
            inside = rows[self.scope.rows(self.trace)[rows]]
            rows = inside if len(inside) else rows
        self.post_message(SlicesChosen(rows, mark=True, jump=jump))


def _kept(last: object | None) -> PaneState | None:
    return last if isinstance(last, PaneState) else None
