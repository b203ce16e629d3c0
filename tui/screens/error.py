"""ErrorScreen: something went wrong inside the app; say what, and offer the way back."""

from __future__ import annotations

import functools
import inspect
import traceback
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.model.text import shown

F = TypeVar("F", bound=Callable[..., Any])


class ErrorScreen(ModalScreen[None]):
    """The error, its traceback for a bug report, and the keys to go back or quit."""

    DEFAULT_CSS = """
    ErrorScreen { align: center middle; }
    ErrorScreen > VerticalScroll { width: 90%; height: auto; max-height: 80%;
        border: round $error; background: $panel; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, message: str, details: str) -> None:
        super().__init__()
        self.message, self.details = message, details

    def compose(self) -> ComposeResult:
        text = Text("Something went wrong, and the view may be incomplete.\n\n", style="bold")
        text.append(shown(self.message) + "\n\n")
        text.append("escape: back to the trace   q: quit\n\n", style="bold")
        # Line by line: the traceback's own line breaks stay breaks, not `\x0a`.
        lines = self.details[:20_000].splitlines()
        text.append("\n".join(shown(line) for line in lines), style="dim")
        with VerticalScroll():
            yield Static(text)


def guarded(method: F) -> F:
    """Run a handler (a coroutine one too); if it fails, show the error screen instead of
    ending the app.

    For the app's own code paths only: what a trace can do to them is wide, and a user in the
    middle of an investigation should keep their session (and can report the traceback).
    """
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def waited(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return await method(self, *args, **kwargs)
            except Exception as error:
                _show(self, error)
                return None

        return waited  # type: ignore[return-value]

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as error:
            _show(self, error)
            return None

    return wrapper  # type: ignore[return-value]


def _show(node: Any, error: Exception) -> None:
    """The error screen, with the traceback: shown to the user, not swallowed."""
    message = f"{type(error).__name__}: {error}"
    shown_errors = getattr(node.app, "shown_errors", None)
    if isinstance(shown_errors, list):  # kept, so that tests fail on any error shown
        shown_errors.append(message)
    node.app.push_screen(ErrorScreen(message, traceback.format_exc()))
