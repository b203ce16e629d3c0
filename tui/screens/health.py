"""HealthScreen: torch's trace checks that fail and what loading repaired, each with examples to
jump to (enter); escape closes."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.model.analysis.health import Finding, Health
from tui.model.text import printable
from tui.model.timescale import format_duration
from tui.model.trace import Trace
from tui.widgets.key_footer import KeyFooter


class HealthScreen(ModalScreen[int | None]):
    """Dismissed with the slice row of the example chosen, or None."""

    DEFAULT_CSS = """
    HealthScreen { align: center middle; }
    HealthScreen > Vertical { width: 100; max-width: 100%; height: auto; max-height: 90%;
        border: round $primary; background: $panel; padding: 0 1; }
    HealthScreen #head { height: auto; }
    HealthScreen OptionList { height: auto; max-height: 30; border: none; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,H", "dismiss_none", "Close"),
    ]

    def __init__(self, trace: Trace, found: Health) -> None:
        super().__init__()
        self.trace, self.found = trace, found

    def compose(self) -> ComposeResult:
        head = Text(f"Trace health: {self.found.line.removeprefix('health: ')}\n", style="bold")
        head.append("torch's trace checks that fail, what loading repaired, what it skipped; ")
        head.append("enter on an example goes to it, escape closes.")
        options: list[Option] = []
        for title, findings in (
            ("Checks that fail", self.found.checks),
            ("Repaired", self.found.repairs),
            ("Skipped", self.found.skipped),
        ):
            if not findings:
                continue
            options.append(Option(Text(title, style="bold underline"), disabled=True))
            for f in findings:
                options.append(Option(_heading(f), disabled=True))
                # Ids are unique per option: one slice may be the example of two findings.
                options += [
                    Option(Text(f"    {self._example(row)}"), id=f"{len(options) + k}:{row}")
                    for k, row in enumerate(f.examples)
                ]
        if not options:
            options.append(
                Option("Every check passes; nothing was repaired or skipped.", disabled=True)
            )
        with Vertical():
            yield Static(head, id="head")
            yield OptionList(*options)
        yield KeyFooter()  # its own keys, not those of the screen under it

    def _example(self, row: int) -> str:
        t = self.trace
        when = format_duration(int(t.slices.start[row]))
        return printable(f"{t.slice_name(row)} at +{when} on {t.lane_of(row).name}")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(int(event.option.id.split(":")[1]))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


def _heading(f: Finding) -> Text:
    text = Text(f"  {f.count:,}  ", style="bold")
    text.append(printable(f.what))
    if f.rule not in ("repair", "skipped"):
        text.append(f"  [{f.rule}]", style="dim")
    if f.unchecked:
        text.append(f"  ({f.unchecked:,} events not read)", style="dim")
    return text
