"""The one spec of every table: its columns, their values, text, JSON keys, shares and sort keys.

`summary` (text, Markdown, JSON, `--sort`) and the stats pane read these specs, so the tables
cannot drift apart. The op table's columns and names are those of torch's
`key_averages().table()`: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, the
CUDA columns (when the trace has GPU work), the memory columns (when it has allocator records)
and # of Calls; then, once the roofline is known (roofline.py; `summary` finds it, the pane
in a thread), GFLOPs, TFLOP/s and % of roof of the modelled calls (op_work.py). A share
column is the row's value over a total of the scope, as torch takes them: Self CPU % and CPU
total % over the Self CPU time total, Self CUDA % over the Self CUDA time total, a kernel's
GPU % over the GPU time of the kernel table; it sorts as its value column.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast

from ..analysis.graphs import graphs
from ..analysis.kernels import KernelStat, kernel_stats
from ..analysis.op_work import WorkTotals, kernel_work, op_work
from ..analysis.ops import OpStat, op_stats
from ..analysis.roofline import Roofline
from ..analysis.scope import Scope
from ..analysis.summary import Summary, summarize
from ..timescale import format_bytes, format_duration
from ..trace import Trace

Row = Any  # an OpStat or a KernelStat: a table's rows are all of one kind


@dataclass(frozen=True)
class Totals:
    """What shares are taken of, over every row of the scope (not only those shown)."""

    self_cpu_ns: int = 0
    self_cuda_ns: int = 0
    gpu_ns: int = 0  # GPU work in the kernel table


@dataclass(frozen=True)
class Column:
    """One column of a table.

    Attributes:
        key: the sort key (`--sort`, the pane) and the base of the JSON key.
        header: as torch names it.
        value: the raw value of a row (sorted on, written to JSON).
        text: the row's cell, given the totals.
        json_key: where the value goes in JSON ("a.b" nests); None to leave it out.
        json_value: what JSON gets, when not `value` (a share as a fraction, say).
        share_of: for a share column, the Totals field it is a share of.
        needs: "gpu", "memory", "work" or "graphs" when shown only for traces that have GPU
            work, allocator records, ops the performance model knows (with a roofline), or CUDA
            graph replays; "json" for a value written to JSON only.
    """

    key: str
    header: str
    value: Callable[[Row], Any]
    text: Callable[[Row, Totals], str]
    json_key: str | None
    share_of: str | None = None
    needs: str | None = None
    numeric: bool = True
    json_value: Callable[[Row], Any] | None = None


@dataclass(frozen=True)
class Table:
    """A table kind: its columns in order and the sort it starts with."""

    name: str
    columns: tuple[Column, ...]
    default_sort: str

    @property
    def sort_keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.key for c in self.columns))

    def shown(self, trace: Trace, work: bool = False) -> list[Column]:
        """The columns this trace has data for (`work`: its rows carry the roofline's)."""
        has = {
            "gpu": any(lane.kind == "gpu" for lane in trace.lanes),
            "memory": len(trace.memory) > 0,
            "work": work,
            "graphs": bool(graphs(trace).replays),
            "triton": any(n.startswith("triton_") for n in trace.names),
            "json": False,
        }
        return [c for c in self.columns if c.needs is None or has[c.needs]]

    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key and c.share_of is None)

    def sort(self, rows: list[Row], key: str) -> list[Row]:
        """Rows by `key`: numbers largest first, names A to Z."""
        column = self.column(key)
        return sorted(rows, key=column.value, reverse=column.numeric)


def _duration(get: Callable[[Row], float]) -> Callable[[Row, Totals], str]:
    return lambda r, _: format_duration(get(r))


def _bytes(get: Callable[[Row], int]) -> Callable[[Row, Totals], str]:
    return lambda r, _: format_bytes(get(r))


def _share(get: Callable[[Row], float], total: str) -> Callable[[Row, Totals], str]:
    def text(row: Row, totals: Totals) -> str:
        whole = getattr(totals, total)
        return f"{get(row) / whole:.2%}" if whole else "-"

    return text


def _plain(get: Callable[[Row], Any]) -> Callable[[Row, Totals], str]:
    return lambda r, _: str(get(r))


def _count(get: Callable[[Row], int]) -> Callable[[Row, Totals], str]:
    return lambda r, _: f"{get(r):,}"


def _work_columns() -> tuple[Column, ...]:
    """GFLOPs, TFLOP/s and % of roof of a row's modelled calls (op_work.py); rows without
    any sort last and show "-"."""

    def number(get: Callable[[WorkTotals], float | None]) -> Callable[[Row], float]:
        def value(r: Row) -> float:
            got = get(r.work) if r.work is not None else None
            return -1.0 if got is None else got

        return value

    def gflops(w: WorkTotals) -> float:
        return w.flops / 1e9

    def roof(w: WorkTotals) -> float | None:
        return w.percent_of_roof

    def tflops(w: WorkTotals) -> float | None:
        return w.tflops

    def text(
        get: Callable[[Row], float], shown: Callable[[Row, float], str]
    ) -> Callable[[Row, Totals], str]:
        return lambda r, _: "-" if get(r) < 0 else shown(r, get(r))

    def roof_text(r: Row, value: float) -> str:
        return f"{value:.1f}% {r.work.bound}"

    def maybe(get: Callable[[WorkTotals], Any]) -> Callable[[Row], Any]:
        return lambda r: get(r.work) if r.work is not None else None

    g, t, p = number(gflops), number(tflops), number(roof)
    return (
        Column(
            "gflops",
            "GFLOPs",
            g,
            text(g, lambda _, v: _figure(v)),
            "flops",
            needs="work",
            json_value=maybe(lambda w: w.flops),
        ),
        Column(
            "tflops",
            "TFLOP/s",
            t,
            text(t, lambda _, v: f"{v:.2f}"),
            "tflops",
            needs="work",
            json_value=maybe(tflops),
        ),
        Column(
            "roof",
            "% of roof",
            p,
            text(p, roof_text),
            "percent_of_roof",
            needs="work",
            json_value=maybe(roof),
        ),
        Column(
            "roof",
            "Bound",
            p,
            lambda r, _: r.work.bound or "" if r.work else "",
            "bound",
            needs="json",
            json_value=maybe(lambda w: w.bound),
        ),
    )


def _figure(value: float) -> str:
    """Three significant figures, without exponents up to millions."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _ops(by_shape: bool = False) -> Table:
    def self_cpu(r: OpStat) -> int:
        return r.self_cpu_ns

    def cpu_total(r: OpStat) -> int:
        return r.cpu_total_ns

    def self_cuda(r: OpStat) -> int:
        return r.self_cuda_ns

    def avg_ns(r: OpStat, total: int) -> int:
        return round(total / r.calls) if r.calls else 0

    def cpu_avg(r: OpStat) -> int:
        return avg_ns(r, r.cpu_total_ns)

    def cuda_avg(r: OpStat) -> int:
        return avg_ns(r, r.cuda_total_ns)

    def name(r: OpStat) -> str:
        return r.name

    columns = (
        Column("name", "Name", name, _plain(name), "name", numeric=False),
        Column(
            "self_cpu", "Self CPU %", self_cpu, _share(self_cpu, "self_cpu_ns"), None, "self_cpu_ns"
        ),
        Column("self_cpu", "Self CPU", self_cpu, _duration(self_cpu), "self_cpu_ns"),
        Column(
            "cpu_total",
            "CPU total %",
            cpu_total,
            _share(cpu_total, "self_cpu_ns"),
            None,
            "self_cpu_ns",
        ),
        Column("cpu_total", "CPU total", cpu_total, _duration(cpu_total), "cpu_total_ns"),
        Column("cpu_avg", "CPU time avg", cpu_avg, _duration(cpu_avg), "cpu_avg_ns"),
        Column(
            "self_cuda", "Self CUDA", self_cuda, _duration(self_cuda), "self_cuda_ns", needs="gpu"
        ),
        Column(
            "self_cuda",
            "Self CUDA %",
            self_cuda,
            _share(self_cuda, "self_cuda_ns"),
            None,
            "self_cuda_ns",
            needs="gpu",
        ),
        Column(
            "cuda_total",
            "CUDA total",
            lambda r: r.cuda_total_ns,
            _duration(lambda r: r.cuda_total_ns),
            "cuda_total_ns",
            needs="gpu",
        ),
        Column(
            "cuda_avg", "CUDA time avg", cuda_avg, _duration(cuda_avg), "cuda_avg_ns", needs="gpu"
        ),
        *(
            Column(key, header, get, _bytes(get), f"{key}_bytes", needs="memory")
            for key, header, get in (
                ("cpu_mem", "CPU Mem", lambda r: r.cpu_mem),
                ("self_cpu_mem", "Self CPU Mem", lambda r: r.self_cpu_mem),
                ("cuda_mem", "CUDA Mem", lambda r: r.cuda_mem),
                ("self_cuda_mem", "Self CUDA Mem", lambda r: r.self_cuda_mem),
            )
        ),
        Column("calls", "# of Calls", lambda r: r.calls, _count(lambda r: r.calls), "calls"),
        *_work_columns(),
    )
    if not by_shape:
        return Table("ops", columns, "cpu_total")

    # key_averages(group_by_input_shape=True) adds Input Shapes; a call's least and most time
    # tell a slow call of one shape from many fast ones.
    def ranged(key: str, header: str, get: Callable[[OpStat], int]) -> Column:
        return Column(key, header, get, _duration(get), f"{key}_ns")

    shapes = Column("shapes", "Input Shapes", lambda r: r.shapes, _plain(lambda r: r.shapes),
                    "input_shapes", numeric=False)  # fmt: skip
    at = {c.header: i for i, c in enumerate(columns)}
    cpu_end, cuda_end = at["CPU time avg"] + 1, at["CUDA time avg"] + 1
    # torch prints Input Shapes last; here it comes second, where it is in view.
    columns = (
        columns[0],
        shapes,
        *columns[1:cpu_end],
        ranged("cpu_min", "CPU min", lambda r: r.cpu_min_ns),
        ranged("cpu_max", "CPU max", lambda r: r.cpu_max_ns),
        *columns[cpu_end:cuda_end],
        replace(ranged("cuda_min", "CUDA min", lambda r: r.cuda_min_ns), needs="gpu"),
        replace(ranged("cuda_max", "CUDA max", lambda r: r.cuda_max_ns), needs="gpu"),
        *columns[cuda_end:],
    )
    return Table("shapes", columns, "cpu_total")


# Launch geometry Kineto writes on kernels: (sort key, header, the KernelStat.geometry label).
_GEOMETRY = (
    ("grid", "Grid", "grid"),
    ("block", "Block", "block"),
    ("registers", "Registers", "registers"),
    ("shared_mem", "Shared mem", "shared mem"),
    ("occupancy", "Occupancy %", "occupancy %"),
)
# Inductor's config of a Triton kernel, from its launcher: shown for traces that have them.
_TRITON = (
    ("warps", "Warps", "warps"),
    ("stages", "Stages", "stages"),
    ("config", "Triton config", "config"),
)


def _kernels() -> Table:
    def name(r: KernelStat) -> str:
        return r.name

    def avg(r: KernelStat) -> int:
        return round(r.avg_ns)

    def geometry(label: str) -> Callable[[KernelStat], str]:
        return lambda r: r.geometry.get(label, "")

    def geometry_size(label: str) -> Callable[[KernelStat], float]:
        return lambda r: _size(r.geometry.get(label, ""))

    columns = (
        Column("name", "Name", name, _plain(name), "name", numeric=False),
        Column("total", "Total", lambda r: r.total_ns, _duration(lambda r: r.total_ns), "total_ns"),
        Column(
            "total",
            "GPU %",
            lambda r: r.total_ns,
            _share(lambda r: r.total_ns, "gpu_ns"),
            "share",
            "gpu_ns",
            json_value=lambda r: round(r.share, 6),
        ),
        Column("avg", "Avg", avg, _duration(avg), "avg_ns"),
        Column("min", "Min", lambda r: r.min_ns, _duration(lambda r: r.min_ns), "min_ns"),
        Column("max", "Max", lambda r: r.max_ns, _duration(lambda r: r.max_ns), "max_ns"),
        Column("calls", "# of Calls", lambda r: r.calls, _count(lambda r: r.calls), "calls"),
        *(
            Column(key, header, geometry_size(label), _plain(geometry(label)), f"geometry.{label}")
            for key, header, label in _GEOMETRY
        ),
        *(
            Column(
                key,
                header,
                geometry_size(label),
                _plain(geometry(label)),
                f"geometry.{label}",
                needs="triton",
                numeric=key != "config",
            )
            for key, header, label in _TRITON
        ),
        Column(
            "graph",
            "Graph",
            _graph_sort,
            _plain(_graph_label),
            "graphs",
            needs="graphs",
            numeric=False,
            json_value=lambda r: list(r.graphs),
        ),
        # Last, so the columns before keep their places when the roofline arrives.
        *_work_columns(),
    )
    return Table("kernels", columns, "total")


def _graph_label(r: KernelStat) -> str:
    """The CUDA graph it was replayed in ("graph #1"), "+N" for more, and how many of its calls
    ran there when not all did ("graph #2 (6 of 242)"); "" when never."""
    if not r.graphs:
        return ""
    label = r.graphs[0] + (f" +{len(r.graphs) - 1}" if len(r.graphs) > 1 else "")
    return label if r.graphed == r.calls else f"{label} ({r.graphed:,} of {r.calls:,})"


def _graph_sort(r: KernelStat) -> str:
    """Kernels replayed in graphs first (A to Z), the others after."""
    return _graph_label(r) or "\uffff"


def _size(text: str) -> float:
    """A geometry value as a number to sort on: 32 -> 32, a 4x2x1 grid -> 8 (blocks in all);
    -1 where the kernel has none, so those sort last."""
    try:
        size = 1.0
        for part in text.split("x"):
            size *= float(part)
        return size
    except ValueError:
        return -1.0


OPS = _ops()
WORK_SORTS = ("gflops", "tflops", "roof")  # the roofline's columns: shown with shapes only
SHAPES = _ops(by_shape=True)
KERNELS = _kernels()


def table_for(kernels: bool, by_shape: bool = False) -> Table:
    """The kernel table, or the op table (by name, or by name and input shapes)."""
    if kernels:
        return KERNELS
    return SHAPES if by_shape else OPS


def cells(columns: list[Column], row: Row, totals: Totals) -> list[str]:
    return [c.text(row, totals) for c in columns]


def row_json(table: Table, row: Row) -> dict[str, Any]:
    """Every value of a row under its JSON key, whatever columns the trace shows."""
    out: dict[str, Any] = {}
    for c in table.columns:
        if c.json_key is None:
            continue
        *groups, key = c.json_key.split(".")
        into = out
        for g in groups:
            into = into.setdefault(g, {})
        if groups:  # geometry: the text as Kineto wrote it, left out where a kernel has none
            text = c.text(row, Totals())
            if text:
                into[key] = text
        else:
            into[key] = (c.json_value or c.value)(row)
    return out


@dataclass(frozen=True)
class ScopeReport:
    """Everything the summary and the stats pane show for one scope."""

    summary: Summary
    table: Table
    columns: list[Column]  # those the trace has data for
    rows: list[Row]  # every row of the scope, sorted
    totals: Totals
    sort: str


REPORTS_KEPT = 16  # scope reports kept per trace, least recently used dropped first


def scope_report(
    trace: Trace,
    scope: Scope | None = None,
    kernels: bool = False,
    sort: str | None = None,
    roof: Roofline | None = None,
    by_shape: bool = False,
) -> ScopeReport:
    """The summary strip, the table's rows and the totals for a scope (default: the trace);
    with `roof`, the rows carry the FLOPs and roof of their modelled calls; `by_shape`: the op
    table by name and input shapes (every op's args are read once, about a second a million).

    The summary covers the scope's window, or the profiled steps for a scope without one. The
    last REPORTS_KEPT are kept: the pane asks again at every `x` and `v`.
    """
    scope = scope or Scope()
    kept = cast(OrderedDict[Any, ScopeReport], trace.derive("scope_reports", OrderedDict))
    if roof is not None and not roof.rows:
        roof = None
    # One trace's roofline is fixed by its peaks.
    by_shape = by_shape and not kernels
    key = (scope, kernels, sort, roof is not None, roof.peaks if roof else None, by_shape)
    found = kept.get(key)
    if found is not None:
        kept.move_to_end(key)
        return found
    kept[key] = report = _scope_report(trace, scope, kernels, sort, roof, by_shape)
    while len(kept) > REPORTS_KEPT:
        kept.popitem(last=False)
    return report


def _scope_report(
    trace: Trace,
    scope: Scope,
    kernels: bool,
    sort: str | None,
    roof: Roofline | None,
    by_shape: bool,
) -> ScopeReport:
    table = table_for(kernels, by_shape)
    ops = op_stats(trace, scope)  # the totals are the same by name or by shape
    rows: list[Row] = (
        list(kernel_stats(trace, scope)) if kernels else op_stats(trace, scope, by_shape)
    )
    gpu = sum(k.total_ns for k in rows) if kernels else 0
    totals = Totals(sum(o.self_cpu_ns for o in ops), sum(o.self_cuda_ns for o in ops), gpu)
    if roof is not None:
        work = kernel_work(trace, roof, scope) if kernels else op_work(trace, roof, scope, by_shape)
        rows = [replace(r, work=work.get(r.key)) for r in rows]
    key = sort or table.default_sort
    shown = table.shown(trace, work=roof is not None)
    return ScopeReport(
        summarize(trace, scope=scope), table, shown, table.sort(rows, key), totals, key
    )
