"""Tables as Markdown, ready to paste into an issue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...text import shown
from .text import CELL_LIMIT

if TYPE_CHECKING:  # the spec imports analyses; `info` writes JSON without them
    from ..table_spec import Grid


def _cell(text: str) -> str:
    # `<built-in function ...>` would be read as an HTML tag and vanish.
    return shown(text, CELL_LIMIT).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def markdown(headers: list[str], rows: list[list[str]]) -> list[str]:
    def line(row: list[str]) -> str:
        return "| " + " | ".join(_cell(c) for c in row) + " |"

    return [line(headers), "|" + "---|" * len(headers), *(line(r) for r in rows)]


def grid_lines(grid: Grid) -> list[str]:
    return markdown(grid.headers, grid.cells)
