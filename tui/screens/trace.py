"""TraceScreen: one trace: the timeline, the details under it and one pane slot, where the
stats, call tree, diff and next-steps panes take turns.

Keys go to what has focus: a pane declares its own bindings, so they act only while it has the
keys, and the screen forwards none. A new pane is its widget module plus one line in PANES.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

from tui.model.analysis.collectives import communication_rows
from tui.model.analysis.diff import TraceDiff, aligned_window
from tui.model.analysis.gaps import idle_gaps
from tui.model.analysis.health import health
from tui.model.analysis.verdict import Verdict
from tui.model.present.names import shown_names
from tui.model.present.tables import prepare
from tui.model.text import printable
from tui.model.trace import Trace
from tui.screens.error import guarded
from tui.screens.health import HealthScreen
from tui.screens.keys import COMMON
from tui.screens.layout_rows import rows_for
from tui.widgets.advice_pane import AdvicePane
from tui.widgets.diff_pane import DiffPane
from tui.widgets.focus import focus_now
from tui.widgets.key_footer import KeyFooter, TextBox
from tui.widgets.pane import Pane, PaneContext, SlicesChosen
from tui.widgets.slice_details import SliceDetails
from tui.widgets.stats_pane import StatsPane
from tui.widgets.stats_table import StatsTable
from tui.widgets.time_ruler import TimeRuler
from tui.widgets.timeline import Timeline
from tui.widgets.trace_summary import TraceSummary
from tui.widgets.tree_pane import TreePane


@dataclass
class Pair:
    """What the BASE and NEW screens of `trace-tui BASE NEW` share: what changed, once NEW has
    loaded."""

    changes: TraceDiff | None = None


@runtime_checkable
class Kept(Protocol):
    """A pane that can say how it was left (sort, filter, table), to open so again."""

    def state(self) -> object: ...


@runtime_checkable
class Follows(Protocol):
    """A pane that follows the timeline's window, selection and marked range (for its scope)."""

    selected: int
    marked: tuple[int, int] | None

    def follow(
        self, window: tuple[int, int], selected: int, marked: tuple[int, int] | None
    ) -> None: ...


@dataclass(frozen=True)
class PaneKind:
    """A pane of the slot: its name, the key that opens and closes it, how it opens (the pane,
    or the line saying why it cannot now) and whether only a pair offers it."""

    name: str
    key: str
    description: str
    opened: Callable[[PaneContext], Pane | str]
    paired: bool = False


DETAILS_ROWS = 9  # the details box's height in app.tcss, kept unless the lanes leave rows spare

PANES = (
    PaneKind("stats", "t", "Stats", StatsPane.opened),
    PaneKind("tree", "T", "Call tree", TreePane.opened),
    PaneKind("diff", "D", "Diff", DiffPane.opened, paired=True),
    PaneKind("advice", "A", "Next steps", AdvicePane.opened),
)


@runtime_checkable
class PairSwitch(Protocol):
    """The app of a BASE/NEW pair, as the screen asks it to show the other trace."""

    async def show_other_trace(self) -> None: ...


class TraceScreen(Screen[None]):
    """One trace; in a rank set one rank's (`rank`), in a pair one side's (`side`, `pair`)."""

    HELP_TITLE = "This trace"
    HELP_MOUSE = (
        "click selects a slice, drag marks a range, the wheel scrolls rows, ctrl+wheel or "
        "shift+wheel zooms."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        *COMMON,
        Binding("slash", "search", "Search"),
        Binding("escape", "close_search", "Close search", show=False),
        *(Binding(p.key, f"pane('{p.name}')", p.description) for p in PANES),
        Binding("H", "health", "Trace health", show=False),
        Binding("b", "back_to_ranks", "Ranks"),
        Binding("less_than_sign", "other_rank(-1)", "Rank before, same time", show=False),
        Binding("greater_than_sign", "other_rank(1)", "Rank after, same time", show=False),
        Binding("o", "other_trace", "Other trace"),
        Binding("M", "raw_names", "C++ names as recorded / demangled", show=False),
        Binding("shift+down", "scroll_details(1)", "Scroll the details down", show=False),
        Binding("shift+up", "scroll_details(-1)", "Scroll the details up", show=False),
    ]

    class OtherRankWanted(Message):
        """`<`, `>`: the rank `step` away, at the same time on the traces' own clock."""

        def __init__(self, step: int, window_ns: tuple[int, int] | None) -> None:
            super().__init__()
            self.step, self.window_ns = step, window_ns

    @property
    def changes(self) -> TraceDiff | None:
        return self.pair.changes if self.pair is not None else None

    def __init__(
        self,
        trace: Trace,
        verdict: Verdict | None,
        shown_as: str | None = None,
        *,
        rank: int | None = None,
        side: int = 0,
        pair: Pair | None = None,
    ) -> None:
        super().__init__()
        self.trace, self.verdict, self.shown_as = trace, verdict, shown_as
        self.rank, self.side, self.pair = rank, side, pair
        self.timeline = Timeline(trace)  # here: a trace it cannot show fails before the screen
        self.left: dict[str, object] = {}  # how each pane was last left, to open it so again
        self.open_pane: str | None = None  # the name of the pane in the slot
        self._pane: Widget | None = None  # that pane (a removed one may linger a frame)
        self._details_to: int | None = None  # where shift+up/down are scrolling the details
        self._before_search: Widget | None = None  # what had the focus when search opened

    def compose(self) -> ComposeResult:
        yield TraceSummary(self.trace, self.shown_as)
        yield TimeRuler()
        yield self.timeline
        yield VerticalScroll(SliceDetails(self.verdict), id="details")
        search = TextBox(
            [("enter", "Go to the first match"), ("escape", "Close the search")],
            placeholder="search slice names (enter: go, esc: close)",
            id="search",
            select_on_focus=True,
        )
        search.display = False
        yield search
        # Compact, without the palette hint: at 80 columns the keys that matter still fit.
        yield KeyFooter()

    def on_mount(self) -> None:
        focus_now(self.timeline)
        self._fit_details()  # into the first layout: its first frame is already the right one
        self.call_after_refresh(self._fit_details)
        self.run_worker(partial(prepare, self.trace), thread=True, exit_on_error=False)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_details)

    def _fit_details(self) -> None:
        """Rows the lanes leave empty go to the details box (a trace of few lanes shows all its
        details); with more lanes than rows it keeps its height from app.tcss."""
        # Called after a refresh: the screen may be leaving (another rank opened) by then.
        found = self.query("#details")
        if not found or not found.first().display:
            return
        box = found.first()
        both = rows_for(self, self.timeline, box)
        if both is None:  # before the first layout, which tells: the fit after it does it
            return
        height = both - len(self.timeline.rows)
        if height > DETAILS_ROWS:
            box.styles.height = box.styles.max_height = height
        elif box.styles.height is not None:
            box.styles.height = box.styles.max_height = None

    def action_scroll_details(self, rows: int) -> None:
        """The details box by a row (shift+down, shift+up), when it holds more than it shows."""
        box = self.query_one("#details", VerticalScroll)
        # From where the last press is taking it, not where the box has got to (it moves on
        # the next refresh): keys pressed fast each count.
        pending = self._details_to
        before = pending if pending is not None else round(box.scroll_y)
        target = min(max(before + rows, 0), box.max_scroll_y)
        if box.max_scroll_y == 0:
            self.timeline.say("The details show all they hold: nothing to scroll.")
        elif target == before:
            self.timeline.say(f"At the {'end' if rows > 0 else 'top'} of the details.")
        else:
            box.scroll_to(y=target, animate=False)
            self._details_to = target
            self.call_after_refresh(self._details_arrived)

    def _details_arrived(self) -> None:
        self._details_to = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pane":
            kind = next(p for p in PANES if p.name == parameters[0])
            return self.pair is not None or not kind.paired
        if action in ("back_to_ranks", "other_rank"):
            return self.rank is not None
        if action == "other_trace":
            return self.pair is not None
        if action == "close_search":
            return bool(self.query_one("#search").display)
        if action == "raw_names":  # only a trace with mangled C++ names has two forms
            return bool(shown_names(self.trace).demangled)
        if action == "scroll_details":  # hidden while a pane is open
            return any(box.display for box in self.query("#details"))
        return True

    # --- the pane slot ----------------------------------------------------------------------

    @guarded
    async def action_pane(self, name: str) -> None:
        """Open the pane `name` in the slot, in the details' place, closing the one there; or
        close it if it is the one there.

        The keys after it wait until the pane is mounted and has the focus: typed in one burst
        (`t x`, `A enter`), they reach the pane, not the timeline behind it."""
        if not self.is_attached:  # a key typed after q, read as the app quits
            return
        was = self.open_pane
        self.close_pane()
        if was == name:
            return
        t = self.timeline
        at = PaneContext(
            self.trace, t.window, t.selected, t.marked, self.left.get(name), self.changes, self.side
        )
        pane = next(p for p in PANES if p.name == name).opened(at)
        if isinstance(pane, str):  # it cannot open now
            self.timeline.say(pane)
            return
        self.open_pane, self._pane = name, pane
        pane.closer = self._dismissed
        self.query_one("#details").display = False
        await self.mount(pane, after=self.query_one("#details"))
        if self._pane is pane:  # not closed while it mounted
            for part in pane.query(str(getattr(pane, "FOCUS", "*"))):
                focus_now(part)
                break

    def kept(self, name: str) -> object | None:
        """How the pane `name` is now, if it is open, else how it was left (None: never
        opened)."""
        if self.open_pane == name and isinstance(self._pane, Kept):
            return self._pane.state()
        return self.left.get(name)

    def close_pane(self) -> None:
        """The pane goes (its state kept for next time), the details come back, and the keys
        go to the timeline."""
        name, pane, self.open_pane, self._pane = self.open_pane, self._pane, None, None
        if pane is not None:
            if name is not None and isinstance(pane, Kept):
                self.left[name] = pane.state()
            # A pane closed as it opens (fast keys) goes once its mount has run, so that its
            # on_mount never looks for children it no longer has.
            if pane.is_mounted:
                pane.remove()
            else:
                self.call_after_refresh(pane.remove)
        self.query_one("#details").display = True
        focus_now(self.timeline)  # before the next key: a pane it opens keeps its focus
        self.refresh_bindings()

    def _dismissed(self, pane: Pane) -> None:
        if pane is self._pane:  # not one already closed by a key typed fast
            self.close_pane()

    def _following(self) -> list[Follows]:
        return [self._pane] if isinstance(self._pane, Follows) else []

    # --- what the timeline says ---------------------------------------------------------

    @guarded
    def on_timeline_window_changed(self, message: Timeline.WindowChanged) -> None:
        self._fit_details()  # lanes collapsed or expanded change the rows they need
        for ruler in self.query(TimeRuler):
            ruler.show(message.window, message.gutter, self.timeline.cells_width, message.marked)
        for pane in self._following():
            pane.follow(message.window, pane.selected, message.marked)

    @guarded
    def on_timeline_selection_changed(self, message: Timeline.SelectionChanged) -> None:
        trace = self.trace
        for details in self.query(SliceDetails):
            if message.counter >= 0:
                details.show_counter(trace, message.counter, message.window)
            elif message.slice >= 0:
                details.show_slice(trace, message.slice)
            elif message.gap >= 0:
                details.show_gap(trace, idle_gaps(trace), message.gap)
            else:
                details.clear()
        for pane in self._following():
            pane.follow(message.window, message.slice, pane.marked)

    @guarded
    def on_slices_chosen(self, message: SlicesChosen) -> None:
        """What a pane chose, on the timeline."""
        if message.said is not None:
            self.timeline.say(message.said)
        if not len(message.rows):
            return
        if message.mark:
            self.timeline.set_matches(message.rows)
        if message.jump:
            self.timeline.show_longest(message.rows)

    # --- search, health, and the ways to other traces ---------------------------------------

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        if self.focused is not search:
            self._before_search = self.focused
        search.display = True
        focus_now(search)
        self.refresh_bindings()

    def action_close_search(self) -> None:
        """Back to what had the focus (a pane searched from keeps it), else the timeline."""
        self.query_one("#search", Input).display = False
        before = self._before_search
        self._before_search = None
        shown = before is not None and before.is_attached and before.display and before.visible
        focus_now(before if shown and before is not None else self.timeline)
        self.refresh_bindings()

    @guarded
    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id != "search":
            return
        found = self.timeline.set_search(message.value)
        k, n = self.timeline.match_position()
        self.timeline.say(
            f"match {k:,} of {n:,} for {printable(message.value)!r} (n, N: next, previous)"
            if found
            else f"no slice name contains {printable(message.value)!r}"
        )
        self.action_close_search()

    @guarded
    def action_raw_names(self) -> None:
        """C++ names (kernels mostly) demangled, or as the trace recorded them: everywhere the
        viewer shows a name."""
        names = shown_names(self.trace)
        names.raw = not names.raw
        self.timeline.relabel()
        for table in self.query(StatsTable):
            table.renamed()
        form = "as recorded (mangled)" if names.raw else "demangled"
        self.timeline.say(f"{len(names.demangled):,} C++ names shown {form}: M switches back")

    @guarded
    def action_health(self) -> None:
        """torch's trace checks and what loading repaired; enter on an example goes to it."""

        def chosen(row: int | None) -> None:
            if row is not None:  # selected, in view
                self.timeline.show_longest(np.asarray([row], np.int64))

        self.app.push_screen(HealthScreen(self.trace, health(self.trace)), chosen)

    def action_back_to_ranks(self) -> None:
        self.app.pop_screen()  # to the rank table, under this screen

    def action_other_rank(self, step: int) -> None:
        base = self.trace.base_time_ns
        t0, t1 = self.timeline.window
        self.post_message(
            self.OtherRankWanted(step, (base + t0, base + t1) if base is not None else None)
        )

    async def action_other_trace(self) -> None:
        """`o`: the other trace of the pair, at the same place (the app switches modes). Awaited
        here, not asked by a message: the keys typed after `o` are for the trace it shows."""
        if isinstance(self.app, PairSwitch):
            await self.app.show_other_trace()

    def show_time(self, window_ns: tuple[int, int]) -> None:
        """An absolute window (the traces' own clock: another rank's), moved inside this trace
        where it falls (partly) outside it (a window before its start once crashed the ruler)."""
        if self.trace.base_time_ns is None:
            return
        width, span = window_ns[1] - window_ns[0], max(self.trace.span_ns, 1)
        t0 = min(max(window_ns[0] - self.trace.base_time_ns, 0), max(span - width, 0))
        self.timeline.set_window((t0, min(t0 + width, span)))

    def select_collective(self) -> None:
        """After `enter` on a collective of the rank table: the longest communication kernel in
        view (that collective, where this rank waited longest), selected for its details."""
        t0, t1 = self.timeline.window
        s, rows = self.trace.slices, communication_rows(self.trace)
        inside = rows[(s.start[rows] >= t0) & (s.end[rows] <= t1)]
        if len(inside):
            self.timeline.select(int(inside[np.argmax(s.dur[inside])]))

    async def shown_after(self, other: TraceScreen) -> None:
        """Shown in place of the other trace of the pair: at the same place in the same step,
        with the diff pane as it was left there (open or not)."""
        self.timeline.set_window(aligned_window(other.trace, self.trace, other.timeline.window))
        carried, diff_open = other.kept("diff"), other.open_pane == "diff"
        if self.open_pane == "diff":
            self.close_pane()
        if carried is not None:
            self.left["diff"] = carried
        if diff_open:
            await self.action_pane("diff")
