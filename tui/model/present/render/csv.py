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
    """A JSON row as flat columns: {"geometry": {"grid": "4x1x1"}} -> {"geometry.grid": ...};
    an empty object stays as its key (None), so that its group keeps its place."""
    out: dict[str, object] = {}
    for key, value in record.items():
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = None if isinstance(value, dict) else value
    return out


def header(rows: list[dict[str, object]]) -> list[str]:
    """Each flat key once, in the order the rows first have it; a key that is an object in
    some rows and null (or empty) in others is its object's keys, where it first came."""
    keys: list[str] = []
    for row in rows:
        for key in row:
            if key in keys or any(k.startswith(key + ".") for k in keys):
                continue
            parts = key.split(".")
            groups = [".".join(parts[:i]) for i in range(1, len(parts))]
            holder = next((g for g in groups if g in keys), None)
            if holder is not None:  # it was null (or empty) in an earlier row
                keys[keys.index(holder)] = key
                continue
            siblings = [i for i, k in enumerate(keys) if groups and k.startswith(groups[0] + ".")]
            keys.insert(siblings[-1] + 1 if siblings else len(keys), key)
    return keys


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
    keys = header(flat) if flat else grid.keys
    return [[TABLE, *keys], *([grid.name, *(cell(row.get(k)) for k in keys)] for row in flat)]


def as_csv(grids: list[Grid]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for grid in grids:
        writer.writerows(section(grid))
    return out.getvalue()
