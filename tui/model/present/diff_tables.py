"""The three tables of a diff (ops, kernels, regions), each row a name in BASE and in NEW.

Each table compares a few quantities (its --sort keys). A quantity has five columns: BASE, NEW,
the change and the change in percent (in full), and the change alone. The table a diff shows
has the name, the status and the calls, the ranked quantity in full, and the others as
changes (in Markdown, where width costs nothing, in full too). JSON has each row's values per
side, the changes and the percents.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from msgspec.structs import replace

from ..analysis.diff import KERNEL_COLUMNS, OP_COLUMNS, REGION_COLUMNS, DiffRow
from ..text import printable
from ..timescale import format_duration
from . import vocabulary as v
from .table_spec import Column, Table


class Quantity(msgspec.Struct, frozen=True):
    """One quantity a diff table compares: its --sort key, its field in the rows, its header."""

    key: str
    field: str
    header: str


_Q = {
    "calls": Quantity("calls", "calls", v.CALLS),
    "self_cpu_ns": Quantity("self_cpu", "self_cpu_ns", v.SELF_CPU),
    "cpu_total_ns": Quantity("cpu_total", "cpu_total_ns", v.CPU_TOTAL),
    "self_cuda_ns": Quantity("self_cuda", "self_cuda_ns", v.SELF_CUDA),
    "cuda_total_ns": Quantity("cuda_total", "cuda_total_ns", v.CUDA_TOTAL),
    "total_ns": Quantity("total", "total_ns", v.TOTAL),
    "min_ns": Quantity("min", "min_ns", v.MIN),
    "max_ns": Quantity("max", "max_ns", v.MAX),
    "gpu_ns": Quantity("gpu", "gpu_ns", v.GPU_TOTAL),
    "kernels": Quantity("kernels", "kernels", v.KERNELS),
}
FIELDS = {"ops": OP_COLUMNS, "kernels": KERNEL_COLUMNS, "regions": REGION_COLUMNS}
# The quantities each table ranks by (--sort), in the order the pane numbers them.
_SORTED = {
    "ops": ("calls", "self_cpu_ns", "cpu_total_ns", "self_cuda_ns", "cuda_total_ns"),
    "kernels": ("total_ns", "calls", "max_ns"),
    "regions": ("gpu_ns", "cpu_total_ns", "calls"),
}
# With GPU work (without it, ops by Self CPU and regions by CPU total: diff_report.sorts_for).
_DEFAULT = {"ops": "self_cuda_ns", "kernels": "total_ns", "regions": "gpu_ns"}
SORTS = {t: {_Q[f].key: f for f in fields} for t, fields in _SORTED.items()}
REPLACED = "Kernels only in BASE / NEW"


def header(field: str) -> str:
    return _Q[field].header


def amount(value: int | None, field: str) -> str:
    if value is None:
        return "-"
    return str(value) if field in ("calls", "kernels") else format_duration(value)


def signed(value: int, field: str) -> str:
    return ("+" if value > 0 else "") + amount(value, field)


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


class Headline(msgspec.Struct, frozen=True):
    """One headline number of both traces (ns; None where a trace has none), or the verdicts."""

    label: str
    base: int | None
    new: int | None
    verdicts: tuple[str, str] | None = None

    @property
    def delta(self) -> int | None:
        return self.new - self.base if self.base is not None and self.new is not None else None

    @property
    def percent(self) -> float | None:
        delta = self.delta
        return 100.0 * delta / self.base if delta is not None and self.base else None


def _side(name: str) -> Column[Headline]:
    def value(h: Headline) -> int | str | None:
        if h.verdicts is not None:
            return h.verdicts[name == "new"]
        return h.base if name == "base" else h.new

    def text(h: Headline, _: object) -> str:
        got = value(h)
        return got if isinstance(got, str) else amount(got, "ns")

    return Column(name, name.upper(), lambda h: str(value(h)), text, name, json_value=value)


def _headline_delta(h: Headline, _: object) -> str:
    if h.verdicts is not None:
        return ""
    return signed(h.delta, "ns") if h.delta is not None else "-"


HEADLINES: Table[Headline] = Table(
    "headline",
    (
        Column("metric", "", lambda h: h.label, lambda h, _: h.label, "metric", numeric=False),
        _side("base"),
        _side("new"),
        Column(
            "delta",
            "Delta",
            lambda h: h.delta or 0,
            _headline_delta,
            "delta",
            json_value=lambda h: h.delta,
        ),
        Column(
            "percent",
            "Delta %",
            lambda h: h.percent or 0.0,
            lambda h, _: "" if h.verdicts else percent(h.percent),
            "percent",
            json_value=lambda h: h.percent,
        ),
    ),
    "metric",
)


def _quantity(field: str) -> tuple[Column[DiffRow], ...]:
    """BASE, NEW, delta, delta % and the delta alone (keyed `<key>.<part>`)."""
    q = _Q[field]

    def side(name: str) -> Column[DiffRow]:
        def value(r: DiffRow) -> int:
            return r.value(name, field)

        def text(r: DiffRow, _: object) -> str:
            return amount(value(r) if (r.base if name == "base" else r.new) else None, field)

        return Column(f"{q.key}.{name}", f"{q.header} {name.upper()}", value, text)

    def delta(r: DiffRow) -> int:
        return r.delta(field)

    def pct(r: DiffRow) -> float:
        got = r.percent(field)
        return float("-inf") if got is None else got

    return (
        side("base"),
        side("new"),
        Column(f"{q.key}.delta", f"{q.header} delta", delta, lambda r, _: signed(delta(r), field)),
        Column(f"{q.key}.pct", f"{q.header} delta %", pct, lambda r, _: percent(r.percent(field))),
        Column(q.key, f"Delta {q.header}", delta, lambda r, _: signed(delta(r), field)),
    )


def _replaced_text(r: DiffRow, _: object) -> str:
    gone, came = r.replaced
    return f"{len(gone)} / {len(came)}" if gone or came else ""


def _table(name: str) -> Table[DiffRow]:
    fields = FIELDS[name]

    def calls_text(r: DiffRow, _: object) -> str:
        return f"{amount(r.value('base', 'calls'), 'calls')} -> {r.value('new', 'calls')}"

    columns: list[Column[DiffRow]] = [
        Column(
            "name",
            v.NAME,
            lambda r: r.name,
            lambda r, _: printable(r.name),
            "name",
            numeric=False,
            sortable=False,
        ),
        Column(
            "status",
            v.STATUS,
            lambda r: r.status,
            lambda r, _: r.status,
            "status",
            numeric=False,
            sortable=False,
        ),
        Column(
            "calls.both", v.CALLS, lambda r: r.value("new", "calls"), calls_text, sortable=False
        ),
        *(
            Column(
                part,
                part.capitalize(),
                lambda r: 0,
                lambda r, _: "",
                part,
                needs="json",
                sortable=False,
                json_value=get,
            )
            for part, get in _json_parts(fields)
        ),
        *(c for f in fields for c in _quantity(f)),
    ]
    if name == "regions":
        columns += [
            Column(
                "replaced",
                REPLACED,
                lambda r: len(r.replaced[0]) + len(r.replaced[1]),
                _replaced_text,
                "replaced",
                sortable=False,
                json_value=lambda r: {"gone": r.replaced[0], "new": r.replaced[1]},
            ),
        ]
    sortable = set(SORTS[name])
    columns = [replace(c, sortable=c.sortable and c.key in sortable) for c in columns]
    return Table(f"diff {name}", tuple(columns), _Q[_DEFAULT[name]].key)


def _json_parts(fields: tuple[str, ...]) -> list[tuple[str, Callable[[DiffRow], object]]]:
    def base(r: DiffRow) -> object:
        return r.base

    def new(r: DiffRow) -> object:
        return r.new

    def delta(r: DiffRow) -> object:
        return {c: r.delta(c) for c in fields}

    def pct(r: DiffRow) -> object:
        return {c: r.percent(c) for c in fields}

    return [("base", base), ("new", new), ("delta", delta), ("percent", pct)]


DIFF_TABLES = {name: _table(name) for name in ("ops", "kernels", "regions")}


def shown(name: str, field: str, full: bool = False) -> list[Column[DiffRow]]:
    """The columns a diff table shows ranked by `field`: that quantity in full (BASE, NEW,
    delta, delta %, its header on BASE only), the others as deltas; `full`: all in full."""
    table = DIFF_TABLES[name]
    by_key = {c.key: c for c in table.columns}
    q = _Q[field]
    ranked = [by_key[f"{q.key}.{part}"] for part in ("base", "new", "delta", "pct")]
    short = zip(ranked[1:], ("NEW", "Delta", "Delta %"), strict=True)
    ranked = [ranked[0], *(replace(c, header=h) for c, h in short)]
    out = [by_key["name"], by_key["status"], by_key["calls.both"], *ranked]
    for f in FIELDS[name]:
        if f in (field, "calls"):
            continue
        k = _Q[f].key
        parts = ("base", "new", "delta", "pct")
        out += [by_key[f"{k}.{p}"] for p in parts] if full else [by_key[k]]
    if name == "regions":
        out.append(by_key["replaced"])
    return out
