"""How the analyses' larger facts are written to the cache and read back (passes/facts.py):
a roofline's rows, steps' verdicts, a window's verdict, a scope's op table, graph captures, a
trace's collectives.

Apart from facts.py, and imported on first use: it imports the analyses whose results it reads,
a third of a cached `info`'s start-up, which reads none of them.
"""

from __future__ import annotations

import itertools
from typing import Any

import msgspec
import numpy as np

from ..analysis.collectives import Collective
from ..analysis.gpu_time import GpuTime
from ..analysis.op_work import WorkTotals
from ..analysis.ops import OpStat
from ..analysis.replay_work import Captured
from ..analysis.roofline import ShapeRow, ShapeRows
from ..analysis.summary import StepRow
from ..analysis.verdict import Verdict
from ..analysis.verdict_rules import Evidence
from ..analysis.work import Work


def _whole(value: Any, kind: type = int) -> Any:
    if type(value) is not kind:  # a bool is not an int here
        raise TypeError(f"not {kind.__name__}: {value!r}")
    return value


def dump_all(found: list[Any]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(row) for row in found]


def dump_rows(found: ShapeRows) -> dict[str, Any]:
    rows, call_rows, call_group = found
    return {
        "rows": [msgspec.to_builtins(row) for row in rows],
        "call_rows": call_rows.tolist(),
        "call_group": call_group.tolist(),
    }


def read_rows(kept: Any) -> ShapeRows:
    # The starts come back in the time order they were kept in (the facts' version digests
    # the roofline's code, so rows kept by a build that did not sort them are derived again).
    rows = [
        ShapeRow(**{**row, "work": Work(**row["work"]), "starts": tuple(row["starts"])})
        for row in kept["rows"]
    ]
    call_rows = np.asarray(kept["call_rows"], np.int64)
    call_group = np.asarray(kept["call_group"], np.int64)
    if call_rows.shape != call_group.shape or call_rows.ndim != 1:
        raise ValueError("the calls and their rows differ in length")
    return rows, call_rows, call_group


def read_captures(kept: Any) -> list[Captured]:
    out = []
    for region in kept:
        launches = [_whole(r) for r in region["launches"]]
        kernels = [_whole(k, str) for k in region["kernels"]]
        ops = [_whole(r) for r in region["ops"]]
        if not len(launches) == len(kernels) == len(ops):
            raise ValueError("a capture's launches, kernels and ops differ in length")
        out.append(Captured(launches, kernels, ops))
    return out


def read_collectives(kept: Any) -> list[Collective]:
    out = []
    for row in kept:
        found = Collective(**row)
        if type(found.kind) is not str or type(found.group) is not str:
            raise TypeError("a collective's kind or group: not text")
        for number in (found.start_ns, found.dur_ns):
            _whole(number)
        for maybe in (found.seq, found.bytes, found.group_size):
            if maybe is not None:
                _whole(maybe)
        out.append(found)
    return out


def read_steps(kept: Any) -> list[StepRow]:
    return [
        StepRow(
            _whole(row["name"], str),
            _whole(row["start_ns"]),
            _whole(row["dur_ns"]),
            read_verdict(row["verdict"]),
            _whole(row["overlap_ns"]),
        )
        for row in kept
    ]


_NUMBER = (int, float)  # by `type`, so that a bool is not one
_EVIDENCE = {int, float, list}  # its numbers, and `covers`


def read_verdict(kept: dict[str, Any]) -> Verdict:
    # A verdict per step of the trace (3,000 at 1M events): checked by type, in bulk.
    evidence = kept["evidence"]
    if not set(map(type, evidence.values())) <= _EVIDENCE:
        raise TypeError("a verdict's evidence: not a number")
    covers = tuple((n, ns) for n, ns in evidence["covers"])
    if covers and not set(map(type, itertools.chain(*covers))) <= {str, int}:
        raise TypeError("a verdict's covering names: not names and times")
    found = Evidence(**{**evidence, "covers": covers})
    t0, t1 = kept["window"]
    time = kept["time"]
    if not set(map(type, time.values())) <= {int} or type(t0) is not int or type(t1) is not int:
        raise TypeError("a verdict's times: not whole numbers")
    return Verdict(_whole(kept["label"], str), found, (t0, t1), GpuTime(**time))


# The fields' annotations as written (strings: the modules postpone them), not resolved.
_STAT_INTS = [name for name, kind in OpStat.__annotations__.items() if kind == "int"]
_WORK_FIELDS = dict(WorkTotals.__annotations__)


def read_stats(kept: Any) -> list[OpStat]:
    return [_stat(row) for row in kept]


def _stat(kept: dict[str, Any]) -> OpStat:
    work = kept["work"]
    found = OpStat(**{**kept, "work": None if work is None else _work(work)})
    if not all(type(getattr(found, name)) is int for name in _STAT_INTS):
        raise TypeError("an op's totals: not whole numbers")
    if type(found.name) is not str or type(found.shapes) is not str:
        raise TypeError("an op's name or shapes: not text")
    if type(found.python) is not bool:
        raise TypeError("an op's Python-frame mark: not true or false")
    return found


def _work(kept: dict[str, Any]) -> WorkTotals:
    found = WorkTotals(**kept)
    if not all(type(getattr(found, n)) in _NUMBER for n in _WORK_FIELDS):
        raise TypeError("an op's work: not numbers")
    return found
