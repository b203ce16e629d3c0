"""The op table, by name or by name and input shapes, as torch's `key_averages().table()` has it:
Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, the CUDA columns (when the
trace has GPU work), the memory columns (when it has allocator records) and # of Calls; then,
once the roofline is known, GFLOPs, TFLOP/s and % of roof (work_columns.py). Self CPU % and CPU
total % are over the Self CPU time total, Self CUDA % over the Self CUDA time total, as torch
takes them; a share sorts as its value column.
"""

from __future__ import annotations

from collections.abc import Callable

from msgspec.structs import replace

from ..analysis.kernels import KernelStat
from ..analysis.ops import OpStat
from ..timescale import format_bytes, format_duration
from . import vocabulary as v
from .kernel_table import KERNELS
from .table_spec import Column, Table, Totals, count, plain, share
from .work_columns import work_columns


def duration(get: Callable[[OpStat], int]) -> Callable[[OpStat, Totals], str]:
    return lambda r, _: format_duration(get(r))


def _bytes(get: Callable[[OpStat], int]) -> Callable[[OpStat, Totals], str]:
    return lambda r, _: format_bytes(get(r))


def _avg(r: OpStat, total: int) -> int:
    return round(total / r.calls) if r.calls else 0


def _ops(by_shape: bool = False) -> Table[OpStat]:
    def name(r: OpStat) -> str:
        return r.name

    def self_cpu(r: OpStat) -> int:
        return r.self_cpu_ns

    def cpu_total(r: OpStat) -> int:
        return r.cpu_total_ns

    def self_cuda(r: OpStat) -> int:
        return r.self_cuda_ns

    def cuda_total(r: OpStat) -> int:
        return r.cuda_total_ns

    def cpu_avg(r: OpStat) -> int:
        return _avg(r, r.cpu_total_ns)

    def cuda_avg(r: OpStat) -> int:
        return _avg(r, r.cuda_total_ns)

    def calls(r: OpStat) -> int:
        return r.calls

    def memory(key: str, header: str, get: Callable[[OpStat], int]) -> Column[OpStat]:
        return Column(key, header, get, _bytes(get), f"{key}_bytes", needs="memory")

    columns: tuple[Column[OpStat], ...] = (
        Column("name", v.NAME, name, plain(name), "name", numeric=False),
        Column(
            "self_cpu",
            v.SELF_CPU_PCT,
            self_cpu,
            share(self_cpu, "self_cpu_ns"),
            None,
            "self_cpu_ns",
        ),
        Column("self_cpu", v.SELF_CPU, self_cpu, duration(self_cpu), "self_cpu_ns"),
        Column(
            "cpu_total",
            v.CPU_TOTAL_PCT,
            cpu_total,
            share(cpu_total, "self_cpu_ns"),
            None,
            "self_cpu_ns",
        ),
        Column("cpu_total", v.CPU_TOTAL, cpu_total, duration(cpu_total), "cpu_total_ns"),
        Column("cpu_avg", v.CPU_AVG, cpu_avg, duration(cpu_avg), "cpu_avg_ns"),
        Column(
            "self_cuda", v.SELF_CUDA, self_cuda, duration(self_cuda), "self_cuda_ns", needs="gpu"
        ),
        Column(
            "self_cuda",
            v.SELF_CUDA_PCT,
            self_cuda,
            share(self_cuda, "self_cuda_ns"),
            None,
            "self_cuda_ns",
            needs="gpu",
        ),
        Column(
            "cuda_total",
            v.CUDA_TOTAL,
            cuda_total,
            duration(cuda_total),
            "cuda_total_ns",
            needs="gpu",
        ),
        Column("cuda_avg", v.CUDA_AVG, cuda_avg, duration(cuda_avg), "cuda_avg_ns", needs="gpu"),
        memory("cpu_mem", "CPU Mem", lambda r: r.cpu_mem),
        memory("self_cpu_mem", "Self CPU Mem", lambda r: r.self_cpu_mem),
        memory("cuda_mem", "CUDA Mem", lambda r: r.cuda_mem),
        memory("self_cuda_mem", "Self CUDA Mem", lambda r: r.self_cuda_mem),
        Column("calls", v.CALLS, calls, count(calls), "calls"),
        *work_columns(OpStat),
    )
    if not by_shape:
        return Table("ops", columns, "cpu_total")

    # key_averages(group_by_input_shape=True) adds Input Shapes; a call's least and most time
    # tell a slow call of one shape from many fast ones.
    def ranged(key: str, header: str, get: Callable[[OpStat], int]) -> Column[OpStat]:
        return Column(key, header, get, duration(get), f"{key}_ns")

    def shapes(r: OpStat) -> str:
        return r.shapes

    at = {c.header: i for i, c in enumerate(columns)}
    cpu_end, cuda_end = at[v.CPU_AVG] + 1, at[v.CUDA_AVG] + 1
    # torch prints Input Shapes last; here it comes second, where it is in view.
    columns = (
        columns[0],
        Column("shapes", v.INPUT_SHAPES, shapes, plain(shapes), "input_shapes", numeric=False),
        *columns[1:cpu_end],
        ranged("cpu_min", "CPU min", lambda r: r.cpu_min_ns),
        ranged("cpu_max", "CPU max", lambda r: r.cpu_max_ns),
        *columns[cpu_end:cuda_end],
        replace(ranged("cuda_min", "CUDA min", lambda r: r.cuda_min_ns), needs="gpu"),
        replace(ranged("cuda_max", "CUDA max", lambda r: r.cuda_max_ns), needs="gpu"),
        *columns[cuda_end:],
    )
    return Table("shapes", columns, "cpu_total")


OPS = _ops()
SHAPES = _ops(by_shape=True)
WORK_SORTS = ("gflops", "tflops", "roof")  # the roofline's columns: shown with shapes only


def table_for(kernels: bool, by_shape: bool = False) -> Table[OpStat] | Table[KernelStat]:
    """The kernel table, or the op table (by name, or by name and input shapes)."""
    if kernels:
        return KERNELS
    return SHAPES if by_shape else OPS
