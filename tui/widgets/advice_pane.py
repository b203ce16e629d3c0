"""AdvicePane: the next steps (analysis/advice.py) for a scope, largest possible saving first:
each with its bound, the evidence and the change to try; enter goes to the slice that shows
the evidence (the sync call, the DataLoader call, the kernel, the collective)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.model.analysis.advice import MIN_SAVING, Recommendation, advice_for, bound_text
from tui.model.analysis.scope import Scope
from tui.model.present.scopes import next_scope, scope_named
from tui.model.text import printable
from tui.model.trace import Trace
from tui.screens.error import guarded
from tui.widgets.pane import Pane, PaneContext, SlicesChosen


class AdvicePane(Pane):
    """The recommendations of a scope (the trace, the view, the marked range, the step...)."""

    DEFAULT_CSS = """
    AdvicePane { height: 50%; min-height: 10; border-top: solid $primary; }
    AdvicePane > #advice-head { height: 1; padding: 0 1; background: $boost; }
    AdvicePane > OptionList, AdvicePane > OptionList:focus {
        height: auto; max-height: 10; border: none; padding: 0;
    }
    AdvicePane > #advice-body { height: 1fr; padding: 0 1; border-top: dashed $primary; }
    """
    FOCUS: ClassVar[str] = "#advice"
    HELP_TITLE = "Next steps"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "next_scope", "Scope of the advice"),
        Binding("escape", "close", "Close the next steps", show=False),
    ]

    @classmethod
    def opened(cls, at: PaneContext) -> AdvicePane | str:
        if not at.trace.kind_mask("gpu").any():
            return "no GPU work in this trace: the next steps read the GPU's time"
        return cls(at.trace, at.window, at.selected, at.marked)

    def __init__(
        self,
        trace: Trace,
        window: tuple[int, int],
        selected: int = -1,
        marked: tuple[int, int] | None = None,
    ) -> None:
        super().__init__()
        self.trace = trace
        self.window, self.selected, self.marked = window, selected, marked
        self.scope_name, self.scope_label, self.scope = "trace", "trace", Scope()
        self.found: list[Recommendation] | None = None
        self.generation = 0  # of the advice asked for: a late thread's is dropped

    def compose(self) -> ComposeResult:
        yield Static(id="advice-head")
        yield OptionList(id="advice")
        yield Static(id="advice-body")

    @guarded
    def on_mount(self) -> None:
        self.rebuild()

    def rebuild(self) -> None:
        """The advice of the scope, found in a thread (the summary of a scope reads every
        slice in it), then listed; a newer scope wins."""
        self.generation += 1
        generation, scope = self.generation, self.scope
        self.found = None
        self._head("finding the next steps…")
        self.query_one("#advice", OptionList).clear_options()
        self.query_one("#advice-body", Static).update("")

        def find() -> None:
            found = advice_for(self.trace, scope)
            try:
                self.app.call_from_thread(self._found, generation, found)
            except RuntimeError:  # the app closed meanwhile
                return

        self.run_worker(find, thread=True, group="advice", exit_on_error=False)

    @guarded
    def _found(self, generation: int, found: list[Recommendation]) -> None:
        lists = self.query("#advice")
        if not lists or generation != self.generation:
            return
        self.found = found
        options = lists.first(OptionList)
        options.clear_options()
        for n, r in enumerate(found, 1):
            line = Text(f"{n}. ", style="bold")
            line.append(printable(r.title))
            line.append(f"  {bound_text(r)}", style="bold")
            options.add_option(Option(line))
        if found:
            options.highlighted = 0
            self._show(0)
            self._head("enter: the slice that shows it · v scope")
        else:
            self._head(f"none: no cause here could save {MIN_SAVING:.0%} of the time")

    def _head(self, what: str) -> None:
        head = Text(" Next steps · scope ", style="bold reverse")
        head.append(f"{printable(self.scope_label)} ", style="bold reverse")
        head.append(f" {what}")
        self.query_one("#advice-head", Static).update(head)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show(event.option_index)

    def _show(self, index: int) -> None:
        """The evidence and the change of the recommendation at `index`, under the list."""
        if self.found is None or not 0 <= index < len(self.found):
            return
        r = self.found[index]
        body = Text(printable(r.evidence))
        body.append("\ntry: ", style="bold")
        body.append(printable(r.change))
        if r.target is not None:
            # The lane in full; the name cut to what the line leaves it (a kernel's runs long).
            lane = f" on {printable(r.target.lane)}"
            width = self.query_one("#advice-body", Static).content_size.width or 80
            room = max(width - len("enter: ") - len(lane), 12)
            name = Text(printable(r.target.name))
            name.truncate(room, overflow="ellipsis")  # by cells: wide characters count twice
            body.append("\nenter: ")
            body.append_text(name)
            body.append(lane)
        self.query_one("#advice-body", Static).update(body)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.found is None or not 0 <= event.option_index < len(self.found):
            return
        target = self.found[event.option_index].target
        if target is None:
            self.post_message(
                SlicesChosen(np.zeros(0, np.int64), mark=False, jump=False, said=_NO_SLICE)
            )
            return
        self.post_message(SlicesChosen(np.asarray([target.row], np.int64), mark=False, jump=True))

    def follow(
        self, window: tuple[int, int], selected: int, marked: tuple[int, int] | None
    ) -> None:
        self.window, self.selected, self.marked = window, selected, marked

    @guarded
    def action_next_scope(self) -> None:
        picked = scope_named(
            self.trace, next_scope(self.scope_name), self.window, self.selected, self.marked
        )
        self.scope_name, self.scope_label, self.scope = picked.name, picked.label, picked.scope
        self.rebuild()


_NO_SLICE = "this one is measured over the whole window: no one slice shows it"
