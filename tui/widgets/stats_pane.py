"""StatsPane: the summary strip with the verdict, a name filter, and the op or kernel table."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from tui.model import Trace
from tui.model.kernels import KernelStat, kernel_stats
from tui.model.report import summary_lines
from tui.model.stats import OpStat, Scope, op_stats
from tui.model.text import printable
from tui.model.timescale import format_bytes, format_duration
from tui.model.verdict import summarize
from tui.widgets.stats_table import Column, StatsTable

SCOPES = ("trace", "view", "step", "subtree")


def _pct(part: float, whole: float) -> str:
    return f"{part / whole:.2%}" if whole else "-"


NAME_CELLS = 48


def _name(text: str) -> str:
    """Kernel names run to hundreds of characters: the table shows the start of them."""
    return text if len(text) <= NAME_CELLS else text[: NAME_CELLS - 1] + "…"


def memory_columns() -> list[Column]:
    """key_averages()'s memory columns: bytes allocated less freed, self and with children."""
    b = format_bytes
    return [
        Column("CPU Mem", lambda r: b(r.cpu_mem), lambda r: r.cpu_mem),
        Column("Self CPU Mem", lambda r: b(r.self_cpu_mem), lambda r: r.self_cpu_mem),
        Column("CUDA Mem", lambda r: b(r.cuda_mem), lambda r: r.cuda_mem),
        Column("Self CUDA Mem", lambda r: b(r.self_cuda_mem), lambda r: r.self_cuda_mem),
    ]


def op_columns(cpu: int, cuda: int) -> list[Column]:
    d = format_duration
    return [
        Column("Name", lambda r: _name(r.name), lambda r: r.name, numeric=False),
        Column("Self CPU", lambda r: d(r.self_cpu_ns), lambda r: r.self_cpu_ns),
        Column("Self CPU %", lambda r: _pct(r.self_cpu_ns, cpu), lambda r: r.self_cpu_ns),
        Column("CPU total", lambda r: d(r.cpu_total_ns), lambda r: r.cpu_total_ns),
        Column("CPU avg", lambda r: d(r.cpu_avg_ns), lambda r: r.cpu_avg_ns),
        Column("Self CUDA", lambda r: d(r.self_cuda_ns), lambda r: r.self_cuda_ns),
        Column("Self CUDA %", lambda r: _pct(r.self_cuda_ns, cuda), lambda r: r.self_cuda_ns),
        Column("CUDA total", lambda r: d(r.cuda_total_ns), lambda r: r.cuda_total_ns),
        Column("CUDA avg", lambda r: d(r.cuda_avg_ns), lambda r: r.cuda_avg_ns),
        Column("Calls", lambda r: f"{r.calls:,}", lambda r: r.calls),
    ]


def kernel_columns() -> list[Column]:
    d = format_duration
    geometry = ("grid", "block", "registers", "shared mem", "occupancy %")
    return [
        Column("Name", lambda r: _name(r.name), lambda r: r.name, numeric=False),
        Column("Total", lambda r: d(r.total_ns), lambda r: r.total_ns),
        Column("GPU %", lambda r: f"{r.share:.1%}", lambda r: r.share),
        Column("Calls", lambda r: f"{r.calls:,}", lambda r: r.calls),
        Column("Avg", lambda r: d(r.avg_ns), lambda r: r.avg_ns),
        Column("Min", lambda r: d(r.min_ns), lambda r: r.min_ns),
        Column("Max", lambda r: d(r.max_ns), lambda r: r.max_ns),
        *(
            Column(
                g.capitalize(),
                lambda r, g=g: r.geometry.get(g, ""),
                lambda r, g=g: r.geometry.get(g, ""),
                numeric=False,
            )
            for g in geometry
        ),
    ]


class StatsPane(Vertical):
    """The table users know from key_averages(), rebuilt from the file, tied to the timeline."""

    DEFAULT_CSS = """
    StatsPane { height: 50%; border-top: solid $primary; }
    StatsPane > #strip { height: auto; max-height: 5; padding: 0 1; background: $boost; }
    StatsPane > #filter { height: 1; border: none; padding: 0 1; }
    StatsPane > StatsTable { height: 1fr; }
    """

    class RowChosen(Message):
        """Posted when a row is highlighted (jump=False) or selected with enter (jump=True)."""

        def __init__(self, name: str, kernels: bool, jump: bool) -> None:
            super().__init__()
            self.name, self.kernels, self.jump = name, kernels, jump

    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace
        self.kernels = False
        self.scope_name = "trace"
        self.scope = Scope()

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="strip")
        yield Input(placeholder="filter names", id="filter")
        yield StatsTable(id="stats")

    def on_mount(self) -> None:
        self.rebuild()

    def set_scope(self, name: str, scope: Scope) -> None:
        self.scope_name, self.scope = name, scope
        self.rebuild()

    def toggle_kernels(self) -> None:
        self.kernels = not self.kernels
        self.rebuild()

    def rebuild(self) -> None:
        window = None
        if self.scope.t0 is not None and self.scope.t1 is not None:
            window = (self.scope.t0, self.scope.t1)
        summary = summarize(self.trace, window)
        pairs = dict(summary_lines(summary))
        lines = Text(summary.verdict.label.upper(), style="bold reverse")
        lines.append(f"  {printable(pairs['Why'])}\n")
        lines.append(
            f"{'Kernels' if self.kernels else 'Ops'}, scope {self.scope_name} ", style="bold"
        )
        lines.append("(x ops/kernels, v scope, 1-9 or a header click sorts, enter: longest)\n")
        lines.append("   ".join(f"{label}: {printable(pairs[label])}" for label in list(pairs)[2:]))
        if summary.steps:
            lines.append("\nSteps: ", style="bold")
            lines.append(
                "   ".join(
                    f"{printable(s.name)} {format_duration(s.dur_ns)} GPU "
                    f"{s.verdict.evidence.gpu_busy:.0%} {s.verdict.label}"
                    for s in summary.steps
                )
            )
        self.query_one("#strip", Static).update(lines)
        table = self.query_one(StatsTable)
        if self.kernels:
            rows: list[OpStat] | list[KernelStat] = kernel_stats(self.trace, self.scope)
            table.show(kernel_columns(), list(rows), sort_column=1)
        else:
            ops = op_stats(self.trace, self.scope)
            cpu = sum(o.self_cpu_ns for o in ops)
            cuda = sum(o.self_cuda_ns for o in ops)
            columns = op_columns(cpu, cuda)
            if len(self.trace.memory):
                columns += memory_columns()
            table.show(columns, list(ops), sort_column=3)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.query_one(StatsTable).set_filter(event.value)

    def on_data_table_row_highlighted(self, event: StatsTable.RowHighlighted) -> None:
        self._chosen(jump=False)

    def on_data_table_row_selected(self, event: StatsTable.RowSelected) -> None:
        self._chosen(jump=True)

    def _chosen(self, jump: bool) -> None:
        row = self.query_one(StatsTable).row_at_cursor()
        if isinstance(row, OpStat | KernelStat):
            self.post_message(self.RowChosen(row.name, self.kernels, jump))
