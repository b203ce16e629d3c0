"""GFLOPs, TFLOP/s and % of roof of a row's modelled calls (op_work.py), for the op, by-shape
and kernel tables: shown once the roofline is known; rows without modelled calls sort last and
show "-"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from ..analysis.op_work import WorkTotals
from .table_spec import Column, Totals


class Worked(Protocol):
    """A row that may carry the roofline's numbers of its modelled calls."""

    @property
    def work(self) -> WorkTotals | None: ...


W = TypeVar("W", bound=Worked)


def figure(value: float) -> str:
    """Three significant figures, without exponents up to millions."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def work_columns(_: type[W]) -> tuple[Column[W], ...]:
    """The work columns over rows of type `W` (the argument names it for the type checker)."""

    def number(get: Callable[[WorkTotals], float | None]) -> Callable[[W], float]:
        def value(r: W) -> float:
            got = get(r.work) if r.work is not None else None
            return -1.0 if got is None else got

        return value

    def maybe(get: Callable[[WorkTotals], object]) -> Callable[[W], object]:
        return lambda r: get(r.work) if r.work is not None else None

    def text(
        get: Callable[[W], float], shown: Callable[[W, float], str]
    ) -> Callable[[W, Totals], str]:
        return lambda r, _: "-" if get(r) < 0 else shown(r, get(r))

    def roof_text(r: W, totals: Totals) -> str:
        """The share, or "> roof" for calls faster than their roofs allow (no percentage: an
        assumption failed; `summary --roofline` says which)."""
        if r.work is not None and r.work.above_roof:
            return "> roof"
        value = p(r)
        return "-" if value < 0 else f"{value:.1f}% {r.work.bound if r.work is not None else ''}"

    def bound_text(r: W, _: Totals) -> str:
        return (r.work.bound or "") if r.work is not None else ""

    g = number(lambda w: w.flops / 1e9)
    t = number(lambda w: w.tflops)
    p = number(lambda w: w.percent_of_roof)
    return (
        Column(
            "gflops",
            "GFLOPs",
            g,
            text(g, lambda _, x: figure(x)),
            "flops",
            needs="work",
            json_value=maybe(lambda w: w.flops),
        ),
        Column(
            "tflops",
            "TFLOP/s",
            t,
            text(t, lambda _, x: f"{x:.2f}"),
            "tflops",
            needs="work",
            json_value=maybe(lambda w: w.tflops),
        ),
        Column(
            "roof",
            "% of roof",
            p,
            roof_text,
            "percent_of_roof",
            needs="work",
            json_value=maybe(lambda w: w.percent_of_roof),
        ),
        Column(
            "roof",
            "Above roof",
            p,
            lambda r, _: "",
            "above_roof",
            needs="json",
            json_value=maybe(lambda w: w.above_roof),
        ),
        Column(
            "roof",
            "Bound",
            p,
            bound_text,
            "bound",
            needs="json",
            json_value=maybe(lambda w: w.bound),
        ),
    )
