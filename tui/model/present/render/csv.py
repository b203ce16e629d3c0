"""Tables as csv, for spreadsheets and scripts.

One stream holds the tables of a view one after another. Each starts with its header row, whose
first cell is `table`; every row's first cell is its table's name ("ops", "kernels", "regions",
"ranks", "graph #1", ...). A row's cells are its JSON values (`--format json`): nested objects
flattened to `group.key` columns, lists written as JSON, null as an empty cell; the header
holds each key once, in the order the rows first have it.
"""

from __future__ import annotations

import csv
import io

import orjson

from ..table_spec import Grid, Record

TABLE = "table"


def flatten(record: Record, prefix: str = "") -> dict[str, object]:
    """A JSON row as flat columns: {"geometry": {"grid": "4x1x1"}} -> {"geometry.grid": ...}."""
    out: dict[str, object] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | list | tuple):
        return orjson.dumps(value).decode()
    return str(value)


def section(grid: Grid) -> list[list[str]]:
    """One table's header row and rows."""
    flat = [flatten(r) for r in grid.records]
    keys = list(dict.fromkeys(k for row in flat for k in row))
    return [[TABLE, *keys], *([grid.name, *(cell(row.get(k)) for k in keys)] for row in flat)]


def as_csv(grids: list[Grid]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for grid in grids:
        writer.writerows(section(grid))
    return out.getvalue()
