"""Renderers of the table spec: a `Grid` as text, Markdown, JSON records or csv."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import markdown, text

if TYPE_CHECKING:  # the spec imports analyses; `info` writes JSON without them
    from ..table_spec import Grid


def lines(grid: Grid, as_markdown: bool, layout: str = "ruled") -> list[str]:
    """A table as Markdown, or as text in one of text.LAYOUTS."""
    return markdown.grid_lines(grid) if as_markdown else text.grid_lines(grid, layout)
