"""The op, by-shape and kernel tables of a scope: the rows, totals and columns `summary` and the
stats pane show (the tables themselves: op_table.py, kernel_table.py)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Generic, TypeVar, cast

import msgspec
from msgspec.structs import replace

from ..analysis.advice import Recommendation, advice_for
from ..analysis.kernels import KernelStat, kernel_stats
from ..analysis.op_work import kernel_work, op_work
from ..analysis.ops import OpStat, op_stats
from ..analysis.roofline import Roofline
from ..analysis.scope import Scope
from ..analysis.steps import launch_window
from ..analysis.summary import Summary, summarize
from ..analysis.tensor_cores import has_matmul_kernels
from ..trace import Trace
from .kernel_table import KERNELS
from .op_table import OPS, SHAPES, WORK_SORTS, table_for
from .table_spec import Column, Record, Table, Totals, View

__all__ = ["KERNELS", "OPS", "SHAPES", "WORK_SORTS", "Totals", "table_for"]
S = TypeVar("S", OpStat, KernelStat)


def cells(columns: Sequence[Column[S]], row: S, totals: Totals) -> list[str]:
    return [c.text(row, totals) for c in columns]


def row_json(table: Table[S], row: S) -> Record:
    """Every value of a row under its JSON key, whatever columns the trace shows."""
    return table.view([row]).record(row)


class ScopeReport(msgspec.Struct, Generic[S], frozen=True):
    """Everything the summary and the stats pane show for one scope."""

    summary: Summary
    table: Table[S]
    columns: list[Column[S]]  # those the trace has data for
    rows: list[S]  # every row of the scope, sorted
    totals: Totals
    sort: str
    frames_hidden: int = 0  # Python-frame rows left out of `rows` (scope_report's `frames`)
    advice: list[Recommendation] = msgspec.field(default_factory=list)  # for the summary's window

    def view(self, top: int = 0) -> View[S]:
        """The first `top` rows (0: all) under the columns shown."""
        rows = self.rows[:top] if top else self.rows
        return View(self.table, self.columns, rows, self.totals)

    def texts(self, order: Sequence[int]) -> dict[str, list[str]]:
        """Each row's cells (by row key) in the columns `order` picks from `columns`."""
        columns = [self.columns[i] for i in order]
        return {r.key: [c.text(r, self.totals) for c in columns] for r in self.rows}

    def ordered(self, key: str, descending: bool, within: str = "") -> list[S]:
        """The rows whose key holds `within` (casefolded), by column `key`."""
        rows = [r for r in self.rows if not within or within in r.key.casefold()]
        return self.table.sort(rows, key, descending)


AnyScopeReport = ScopeReport[OpStat] | ScopeReport[KernelStat]
REPORTS_KEPT = 16  # scope reports kept per trace, least recently used dropped first


def scope_report(
    trace: Trace,
    scope: Scope | None = None,
    kernels: bool = False,
    sort: str | None = None,
    roof: Roofline | None = None,
    by_shape: bool = False,
    frames: bool = False,
) -> AnyScopeReport:
    """The summary strip, the table's rows and the totals for a scope (default: the trace);
    with `roof`, the rows carry the FLOPs and roof of their modelled calls; `by_shape`: the op
    table by name and input shapes (every op's args are read once, about a second a million);
    `frames`: the op table keeps its Python-frame rows (`with_stack=True`), which otherwise
    fill its top with wrappers and are only counted. The totals are the same either way.

    The summary covers the scope's window, or the profiled steps for a scope without one. The
    last REPORTS_KEPT are kept: the pane asks again at every `x` and `v`.
    """
    scope = scope or Scope()
    kept = cast(OrderedDict[object, AnyScopeReport], trace.derive("scope_reports", OrderedDict))
    if roof is not None and not roof.rows:
        roof = None
    # One trace's roofline is fixed by its peaks.
    by_shape = by_shape and not kernels
    key = (scope, kernels, sort, roof is not None, roof.peaks if roof else None, by_shape, frames)
    found = kept.get(key)
    if found is not None:
        kept.move_to_end(key)
        return found
    kept[key] = report = _scope_report(trace, scope, kernels, sort, roof, by_shape, frames)
    while len(kept) > REPORTS_KEPT:
        kept.popitem(last=False)
    return report


def prepare(trace: Trace) -> None:
    """Compute ahead, while the user looks at the first screen, what the stats pane's first
    `t` and `x` read: the op rows of the trace and of its launch window (for the summary), the
    kernel rows, whether GEMMs are there (150 ms at 1M slices). All are kept by `Trace.derive`,
    which a thread may fill."""
    op_stats(trace, Scope())
    op_stats(trace, Scope(*launch_window(trace)))
    kernel_stats(trace, Scope())
    has_matmul_kernels(trace)


def _scope_report(
    trace: Trace,
    scope: Scope,
    kernels: bool,
    sort: str | None,
    roof: Roofline | None,
    by_shape: bool,
    frames: bool,
) -> AnyScopeReport:
    ops = op_stats(trace, scope)  # the totals are the same by name or by shape
    summary = summarize(trace, scope=scope)
    totals = Totals(sum(o.self_cpu_ns for o in ops), sum(o.self_cuda_ns for o in ops))
    if kernels:
        rows = list(kernel_stats(trace, scope))
        totals = replace(totals, gpu_ns=sum(k.total_ns for k in rows))
        if roof is not None:
            work = kernel_work(trace, roof, scope)
            rows = [replace(r, work=work.get(r.key)) for r in rows]
        return _made(trace, scope, summary, KERNELS, rows, totals, sort, roof is not None)
    table = SHAPES if by_shape else OPS
    op_rows = op_stats(trace, scope, by_shape)
    if roof is not None:
        found = op_work(trace, roof, scope, by_shape)
        op_rows = [replace(r, work=found.get(r.key)) for r in op_rows]
    kept = op_rows if frames else [r for r in op_rows if not r.python]
    report = _made(trace, scope, summary, table, kept, totals, sort, roof is not None)
    return replace(report, frames_hidden=len(op_rows) - len(kept))


def default_sort(trace: Trace, table: Table[Any]) -> str:
    """What a table is sorted by unless asked: an op table by Self CUDA where the trace has GPU
    work (what the profiler's guide reads first; CPU total puts Python wrappers on top), by
    Self CPU without; the kernel table by its own default."""
    if table.name in ("ops", "shapes"):
        gpu = any(lane.kind == "gpu" and lane.slice_count for lane in trace.lanes)
        return "self_cuda" if gpu else "self_cpu"
    return table.default_sort


def _made(
    trace: Trace,
    scope: Scope,
    summary: Summary,
    table: Table[S],
    rows: list[S],
    totals: Totals,
    sort: str | None,
    work: bool,
) -> ScopeReport[S]:
    key = sort or default_sort(trace, table)
    shown = table.shown(trace, work=work)
    advice = advice_for(trace, scope, summary)
    return ScopeReport(summary, table, shown, table.sort(rows, key), totals, key, advice=advice)
