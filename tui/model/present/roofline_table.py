"""The roofline's table: each op and input shapes the performance model knows, with its FLOPs,
bytes, intensity, achieved rates and its share of the device's roof."""

from __future__ import annotations

import msgspec
import orjson

from ..analysis.roofline import Roofline, ShapeRow
from ..analysis.work import DTYPE_BYTES
from ..text import printable
from ..timescale import format_duration
from . import vocabulary as v
from .table_spec import Column, Table, json_only


class RoofRow(msgspec.Struct, frozen=True):
    """One row of the roofline, with the roofline its share of the roof is taken from."""

    roof: Roofline
    row: ShapeRow

    @property
    def share(self) -> tuple[float, str] | None:
        return self.roof.percent_of_peak(self.row)

    @property
    def above_roof(self) -> str | None:
        return self.roof.above_roof(self.row)

    @property
    def side(self) -> str | None:
        roof = self.roof.roof(self.row.work)
        return roof[1] if roof is not None else None


def _dtypes(row: ShapeRow) -> str:
    """The tensors' dtypes, each once ("BFloat16/float" for a copy from fp32 to bf16)."""
    types = orjson.loads(row.types) if row.types else []
    named = [t.removeprefix("c10::") for t in types if isinstance(t, str) and t in DTYPE_BYTES]
    dtypes = "/".join(dict.fromkeys(named)) or row.work.dtype.removeprefix("c10::")
    return f"{dtypes} ({row.work.math})" if row.work.math else dtypes


def _shapes(row: ShapeRow) -> str:
    """The input shapes, and what else set the numbers (a serving iteration's KV lengths)."""
    return f"{row.dims} ({row.work.context})" if row.work.context else row.dims


def _rate(value: float | None, digits: int) -> str:
    return f"{value:.{digits}f}" if value is not None else "-"


def _sortable(value: float | None) -> float:
    return -1.0 if value is None else value


def _roof_text(r: RoofRow) -> str:
    """The share of the roof, or for a row faster than its roof allows, the assumption that
    failed (no percentage: a rate above the roof is a wrong assumption, not a result)."""
    share, failed = r.share, r.above_roof
    if failed is not None:
        return f"> {failed}"
    return f"{share[0]:.1f}% {share[1]}" if share else "-"


ROOFLINE: Table[RoofRow] = Table(
    "roofline",
    (
        Column(
            "name",
            v.NAME,
            lambda r: r.row.name,
            lambda r, _: printable(r.row.name),
            "name",
            numeric=False,
        ),
        Column(
            "dims",
            "Input Dims",
            lambda r: r.row.dims,
            lambda r, _: printable(_shapes(r.row)),
            "input_dims",
            numeric=False,
            json_value=lambda r: orjson.loads(r.row.dims),
        ),
        Column(
            "dtype",
            "dtype",
            lambda r: _dtypes(r.row),
            lambda r, _: _dtypes(r.row),
            "dtype",
            numeric=False,
            json_value=lambda r: r.row.work.dtype,
        ),
        Column("calls", v.CALLS, lambda r: r.row.calls, lambda r, _: str(r.row.calls), "calls"),
        Column(
            "gpu",
            v.GPU_TOTAL,
            lambda r: r.row.gpu_ns,
            lambda r, _: format_duration(r.row.gpu_ns),
            "gpu_ns",
        ),
        Column(
            "gflops",
            "GFLOPs/call",
            lambda r: r.row.work.flops,
            lambda r, _: f"{r.row.work.flops / 1e9:.4g}",
            "flops_per_call",
        ),
        Column(
            "mb",
            "MB/call",
            lambda r: r.row.work.bytes,
            lambda r, _: f"{r.row.work.bytes / 1e6:.4g}",
            "bytes_per_call",
        ),
        Column(
            "intensity",
            "FLOP/B",
            lambda r: r.row.work.intensity,
            lambda r, _: f"{r.row.work.intensity:.1f}",
            "flops_per_byte",
        ),
        Column(
            "tflops",
            "TFLOP/s",
            lambda r: _sortable(r.row.tflops),
            lambda r, _: _rate(r.row.tflops, 2),
            "tflops",
            json_value=lambda r: r.row.tflops,
        ),
        Column(
            "tbs",
            "TB/s",
            lambda r: _sortable(r.row.tbs),
            lambda r, _: _rate(r.row.tbs, 3),
            "tbs",
            json_value=lambda r: r.row.tbs,
        ),
        Column(
            "roof",
            "% of roof",
            lambda r: _sortable(r.share[0] if r.share else None),
            lambda r, _: _roof_text(r),
            "percent_of_roof",
            json_value=lambda r: r.share[0] if r.share else None,
        ),
        json_only("input_types", lambda r: orjson.loads(r.row.types)),
        json_only("kind", lambda r: r.row.work.kind),
        json_only("context", lambda r: r.row.work.context or None),
        json_only("min_ns", lambda r: r.row.min_ns),
        json_only("max_ns", lambda r: r.row.max_ns),
        json_only("above_roof", lambda r: r.above_roof),
        json_only("bound", lambda r: r.side if r.share or r.above_roof else None),
        json_only("idle_calls", lambda r: r.row.idle_calls),
    ),
    "gpu",
    json_order=(
        "name",
        "input_dims",
        "input_types",
        "dtype",
        "kind",
        "context",
        "calls",
        "gpu_ns",
        "min_ns",
        "max_ns",
        "flops_per_call",
        "bytes_per_call",
        "flops_per_byte",
        "tflops",
        "tbs",
        "percent_of_roof",
        "above_roof",
        "bound",
        "idle_calls",
    ),
)


def roof_rows(roof: Roofline, rows: list[ShapeRow]) -> list[RoofRow]:
    return [RoofRow(roof, row) for row in rows]
