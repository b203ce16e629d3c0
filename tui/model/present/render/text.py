"""Tables as plain text, in the three layouts the reports print."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...text import printable, shown

if TYPE_CHECKING:  # the spec imports analyses; `info` writes JSON without them
    from ..table_spec import Grid

NAME_WIDTH = 60  # a ruled table's first column is cut here
CELL_LIMIT = 500  # longer cells are cut (an op's input shapes can run to megabytes)


def ruled(headers: list[str], rows: list[list[str]]) -> list[str]:
    """Between rules: the first column left (cut at NAME_WIDTH), the others right."""
    rows = [[shown(c, CELL_LIMIT) for c in row] for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    widths[0] = min(widths[0], NAME_WIDTH)

    def fit(text: str, i: int) -> str:
        if i == 0:
            cut = text if len(text) <= widths[0] else text[: widths[0] - 1] + "…"
            return cut.ljust(widths[0])
        return text.rjust(widths[i])

    rule = "  ".join("-" * w for w in widths)
    return [
        rule,
        "  ".join(fit(h, i) for i, h in enumerate(headers)),
        rule,
        *("  ".join(fit(c, i) for i, c in enumerate(r)) for r in rows),
        rule,
    ]


def aligned(headers: list[str], rows: list[list[str]]) -> list[str]:
    """Every column left-aligned, no rules (the rank tables)."""
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for r in rows:
        cells = (printable(c).ljust(w) for c, w in zip(r, widths, strict=True))
        out.append("  ".join(cells).rstrip())
    return out


def name_last(headers: list[str], rows: list[list[str]]) -> list[str]:
    """Numbers in fixed columns, right-aligned, and the last column (an indented name) after
    them in full (the call tree)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers[:-1])]
    out = []
    for row in [headers, *rows]:
        cells = "  ".join(c.rjust(w) for c, w in zip(row[:-1], widths, strict=True))
        out.append(f"{cells}  {row[-1]}".rstrip())
    return out


LAYOUTS = {"ruled": ruled, "aligned": aligned, "name_last": name_last}


def grid_lines(grid: Grid, layout: str = "ruled") -> list[str]:
    return LAYOUTS[layout](grid.headers, grid.cells)
