"""Renderers of the table spec: a `Grid` as text, Markdown, JSON records or csv."""

from __future__ import annotations

from ..table_spec import Grid
from . import markdown, text


def lines(grid: Grid, as_markdown: bool, layout: str = "ruled") -> list[str]:
    """A table as Markdown, or as text in one of text.LAYOUTS."""
    return markdown.grid_lines(grid) if as_markdown else text.grid_lines(grid, layout)
