"""The kernel table: each kernel (memcpy, memset) name's time on the GPU, its share of the
table's GPU time, per call, whether a GEMM or convolution ran on tensor cores, its launch
geometry as Kineto wrote it, its Triton config, the CUDA graphs it was replayed in and, once the
roofline is known, its modelled calls' work."""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.kernels import KernelStat
from ..timescale import format_duration
from . import vocabulary as v
from .table_spec import Column, Table, Totals, count, plain, share
from .work_columns import work_columns

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


def _duration(get: Callable[[KernelStat], int]) -> Callable[[KernelStat, Totals], str]:
    return lambda r, _: format_duration(get(r))


def _geometry(key: str, header: str, label: str, needs: str | None = None) -> Column[KernelStat]:
    def text(r: KernelStat) -> str:
        return r.geometry.get(label, "")

    def size(r: KernelStat) -> float:
        return _size(text(r))

    def written(r: KernelStat) -> str | None:  # left out of JSON where a kernel has none
        return text(r) or None

    numeric = key != "config"
    return Column(
        key,
        header,
        size,
        plain(text),
        f"geometry.{label}",
        needs=needs,
        numeric=numeric,
        json_value=written,
    )


def _kernels() -> Table[KernelStat]:
    def name(r: KernelStat) -> str:
        return r.name

    def total(r: KernelStat) -> int:
        return r.total_ns

    def avg(r: KernelStat) -> int:
        return round(r.avg_ns)

    def least(r: KernelStat) -> int:
        return r.min_ns

    def most(r: KernelStat) -> int:
        return r.max_ns

    def calls(r: KernelStat) -> int:
        return r.calls

    columns: tuple[Column[KernelStat], ...] = (
        Column("name", v.NAME, name, plain(name), "name", numeric=False),
        Column("total", v.TOTAL, total, _duration(total), "total_ns"),
        Column(
            "total",
            v.GPU_PCT,
            total,
            share(total, "gpu_ns"),
            "share",
            "gpu_ns",
            json_value=lambda r: round(r.share, 6),
        ),
        Column("avg", v.AVG, avg, _duration(avg), "avg_ns"),
        Column("min", v.MIN, least, _duration(least), "min_ns"),
        Column("max", v.MAX, most, _duration(most), "max_ns"),
        Column("calls", v.CALLS, calls, count(calls), "calls"),
        Column(
            "tensor_cores",
            "TC",
            _tensor_core_sort,
            plain(_tensor_core_label),
            "tensor_cores",
            needs="matmul",
            numeric=False,
            json_value=lambda r: r.tensor_cores,
        ),
        *(_geometry(key, header, label) for key, header, label in _GEOMETRY),
        *(_geometry(key, header, label, "triton") for key, header, label in _TRITON),
        Column(
            "graph",
            "Graph",
            _graph_sort,
            plain(_graph_label),
            "graphs",
            needs="graphs",
            numeric=False,
            json_value=lambda r: list(r.graphs),
        ),
        # Last, so the columns before keep their places when the roofline arrives.
        *work_columns(KernelStat),
    )
    return Table("kernels", columns, "total")


def _tensor_core_label(r: KernelStat) -> str:
    """`yes`/`no` for a GEMM or convolution kernel (whether it ran on tensor cores), else ""."""
    return {True: "yes", False: "no", None: ""}[r.tensor_cores]


def _tensor_core_sort(r: KernelStat) -> str:
    """The kernels on CUDA cores first (what to look at), those on tensor cores, then the rest."""
    return {False: "0", True: "1", None: "2"}[r.tensor_cores]


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


KERNELS = _kernels()
