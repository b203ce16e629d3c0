"""The machinery of the one table spec: a `Table[R]` of `Column[R]` over one row type.

Every table the product prints or shows (the op, by-shape and kernel tables, the three diff
tables, the rank tables, the roofline, the graph nodes, the call tree, the per-step strip) is a
`Table` declared once in its family's module; `registry.py` lists them all. A column says its
key (`--sort`, the panes), its header (one vocabulary: `vocabulary.py`), its raw value (sorted
on, written to JSON), its text, its JSON key ("a.b" nests), what a share is taken of and
whether it sorts. A `View` is a table with the rows and columns to show; it renders to a
`Grid` of plain values that the text, Markdown, JSON and csv renderers (`render/`) read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import msgspec

from ..analysis.graphs import graphs
from ..analysis.tensor_cores import has_matmul_kernels
from ..trace import Trace

R = TypeVar("R")
Sortable = int | float | str  # what a column sorts on
Record = dict[str, object]  # a row as JSON has it


class Totals(msgspec.Struct, frozen=True):
    """What shares are taken of, over every row of the scope (not only those shown)."""

    self_cpu_ns: int = 0
    self_cuda_ns: int = 0
    gpu_ns: int = 0  # GPU work in the kernel table
    root_ns: int = 0  # the weight of a call tree's root


class Column(msgspec.Struct, Generic[R], frozen=True):
    """One column of a table.

    Attributes:
        key: the sort key (`--sort`, the panes) and the base of the JSON key.
        header: its name in text, Markdown and the panes (vocabulary.py).
        value: the raw value of a row (sorted on, written to JSON).
        text: the row's cell, given the totals.
        json_key: where the value goes in JSON ("a.b" nests; None values are left out of a
            nested group); None to leave it out.
        share_of: for a share column, the Totals field it is a share of.
        needs: "gpu", "memory", "work", "graphs", "triton" or "matmul" when shown only for
            traces that have GPU work, allocator records, ops the performance model knows (with
            a roofline), CUDA graph replays, Triton kernels or GEMM/convolution kernels; "json"
            for a value written to JSON (and csv) only.
        numeric: sorts largest first and is aligned right in the panes.
        json_value: what JSON gets, when not `value` (a share as a fraction, say).
        sortable: whether `--sort` and the panes may sort on it.
    """

    key: str
    header: str
    value: Callable[[R], Sortable]
    text: Callable[[R, Totals], str]
    json_key: str | None = None
    share_of: str | None = None
    needs: str | None = None
    numeric: bool = True
    json_value: Callable[[R], object] | None = None
    sortable: bool = True

    def json(self, row: R) -> object:
        return (self.json_value or self.value)(row)


def features(trace: Trace, work: bool = False) -> frozenset[str]:
    """What a trace has data for, as `Column.needs` names it (`work`: rows carry the
    roofline's numbers)."""
    has = {
        "gpu": any(lane.kind == "gpu" for lane in trace.lanes),
        "memory": len(trace.memory) > 0,
        "work": work,
        "graphs": bool(graphs(trace).replays),
        "triton": any(n.startswith("triton_") for n in trace.names),
        "matmul": has_matmul_kernels(trace),
    }
    return frozenset(name for name, present in has.items() if present)


class Table(msgspec.Struct, Generic[R], frozen=True):
    """A table kind: its columns in order, the sort it starts with, and (where JSON has always
    written them in another order) the order of its JSON keys."""

    name: str
    columns: tuple[Column[R], ...]
    default_sort: str = ""
    json_order: tuple[str, ...] = ()

    @property
    def sort_keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.key for c in self.columns if c.sortable))

    @property
    def text_columns(self) -> list[Column[R]]:
        """Every column text can show (whatever a trace has)."""
        return [c for c in self.columns if c.needs != "json"]

    def shown(self, trace: Trace | None = None, work: bool = False) -> list[Column[R]]:
        """The text columns this trace has data for (without a trace: those that need none)."""
        has = features(trace, work) if trace is not None else frozenset()
        return [c for c in self.columns if c.needs is None or c.needs in has]

    def column(self, key: str) -> Column[R]:
        """The value column of a sort key (not its share)."""
        return next(c for c in self.columns if c.key == key and c.share_of is None)

    def sort(self, rows: Sequence[R], key: str, descending: bool | None = None) -> list[R]:
        """Rows by `key`: numbers largest first, names A to Z (unless `descending` says)."""
        column = self.column(key)
        down = column.numeric if descending is None else descending
        return sorted(rows, key=column.value, reverse=down)

    def view(
        self,
        rows: Sequence[R],
        totals: Totals | None = None,
        columns: Sequence[Column[R]] | None = None,
    ) -> View[R]:
        shown = list(columns) if columns is not None else self.text_columns
        return View(self, shown, list(rows), totals or Totals())


class View(msgspec.Struct, Generic[R], frozen=True):
    """A table with its rows, the columns shown and the totals its shares are taken of."""

    table: Table[R]
    columns: list[Column[R]]
    rows: list[R]
    totals: Totals = msgspec.field(default_factory=Totals)

    @property
    def headers(self) -> list[str]:
        return [c.header for c in self.columns if c.needs != "json"]

    @property
    def right_aligned(self) -> list[bool]:
        """Per shown column (as `headers`): whether it holds numbers (aligned right)."""
        return [c.numeric for c in self.columns if c.needs != "json"]

    def row_cells(self, row: R) -> list[str]:
        return [c.text(row, self.totals) for c in self.columns if c.needs != "json"]

    def cells(self) -> list[list[str]]:
        return [self.row_cells(r) for r in self.rows]

    def record(self, row: R) -> Record:
        """Every JSON value of a row under its key, whatever columns are shown."""
        out: Record = {}
        for c in _json_columns(self.table):
            assert c.json_key is not None
            *groups, key = c.json_key.split(".")
            into = out
            for g in groups:
                inner = into.setdefault(g, {})
                assert isinstance(inner, dict)
                into = inner
            value = c.json(row)
            if not groups or value is not None:
                into[key] = value
        return out

    def records(self) -> list[Record]:
        return [self.record(r) for r in self.rows]

    def grid(self, name: str | None = None) -> Grid:
        keys = [c.json_key for c in _json_columns(self.table) if c.json_key is not None]
        return Grid(name or self.table.name, self.headers, self.cells(), self.records, keys)


def _json_columns(table: Table[R]) -> list[Column[R]]:
    """The columns with a JSON key, each key once, in the table's JSON order."""
    seen: dict[str, Column[R]] = {}
    for c in table.columns:
        if c.json_key is not None and c.json_key not in seen:
            seen[c.json_key] = c
    if not table.json_order:
        return list(seen.values())
    return [seen[k] for k in table.json_order]


class Grid(msgspec.Struct, frozen=True):
    """A table rendered to plain values: what the text, Markdown, JSON and csv renderers read.

    Attributes:
        name: the table's name (the csv's `table` column).
        headers: the text columns' headers.
        cells: each row's text cells, under `headers`.
        make_records: each row's JSON values (the csv flattens them), made when asked for:
            the text of a 1M-event trace's steps does not pay for them.
        keys: the JSON keys of the table (the csv header of a table without rows).
    """

    name: str
    headers: list[str]
    cells: list[list[str]]
    make_records: Callable[[], list[Record]]
    keys: list[str] = msgspec.field(default_factory=list)

    @property
    def records(self) -> list[Record]:
        return self.make_records()


# Cell helpers shared by the table families.


def plain(get: Callable[[R], object]) -> Callable[[R, Totals], str]:
    return lambda r, _: str(get(r))


def count(get: Callable[[R], int]) -> Callable[[R, Totals], str]:
    return lambda r, _: f"{get(r):,}"


def share(get: Callable[[R], float], total: str, digits: int = 2) -> Callable[[R, Totals], str]:
    """The row's value over a total of the scope ("-" where that total is 0)."""

    def text(row: R, totals: Totals) -> str:
        whole = getattr(totals, total)
        return f"{get(row) / whole:.{digits}%}" if whole else "-"

    return text


def json_only(key: str, get: Callable[[R], object]) -> Column[R]:
    """A column only JSON (and csv) carry: no header in text, no sort."""
    return Column(
        key, key, lambda r: 0, lambda r, _: "", key, needs="json", sortable=False, json_value=get
    )
