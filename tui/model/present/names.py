"""How the viewer shows a trace's names: C++ kernel names demangled, or every name as recorded
(one key switches). The model and the text outputs keep the names as recorded: they are what
torch's table and other tools print, and what a script greps for."""

from __future__ import annotations

from ..demangle import demangle
from ..trace import Trace


class ShownNames:
    """A trace's names as shown: `raw` switches between demangled and as recorded."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.demangled = demangle(trace.names)
        self.raw = False

    def text(self, name: str) -> str:
        """A name (as the model holds it) as shown now."""
        return name if self.raw else self.demangled.get(name, name)

    def of(self, row: int) -> str:
        """Slice `row`'s name as shown now."""
        return self.text(self.trace.slice_name(row))

    def all(self) -> list[str]:
        """Every name, by name id, as shown now."""
        if self.raw or not self.demangled:
            return self.trace.names
        return [self.demangled.get(n, n) for n in self.trace.names]

    def is_demangled(self, row: int) -> bool:
        return self.trace.slice_name(row) in self.demangled


def shown_names(trace: Trace) -> ShownNames:
    """The trace's one ShownNames (demangled once, on first use)."""
    return trace.derive("shown_names", lambda: ShownNames(trace))
