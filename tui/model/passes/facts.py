"""What `info` and `summary` derive from a whole trace, derived once per trace content and kept
with the cached model: the health checks (whose args reads cost seconds on a training trace),
whether shapes were recorded (which decodes the first ops' args from the file again), the
roofline's by-shape rows (every modelled call's args decoded again) and how many calls it
models, whether any kernel is a GEMM or convolution, how many pieces of GPU work each
attribution rule placed (the op tree over every slice), every step's verdict, and the first
windows' verdicts and scopes' op tables (what the summary and the viewer's first screen show).

Each fact is kept the moment an analysis derives it into its slot of `trace.derived`, and put
back into that slot when the same content is loaded again, so `health(trace)` finds it and
checks nothing. Nothing is derived ahead of need: `summary` or a rank pass filling the cache
pays for no health check it does not show.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from .. import analysis
from .. import trace as trace_module
from ..analysis import attribution, ops, roofline, summary, tensor_cores, verdict
from ..analysis import health as health_module
from ..analysis.gpu_time import GpuTime
from ..analysis.health import Finding, Health
from ..analysis.op_work import WorkTotals
from ..analysis.ops import OpStat
from ..analysis.roofline import ShapeRow, ShapeRows
from ..analysis.summary import StepRow
from ..analysis.verdict import Evidence, Verdict
from ..analysis.work import Work
from ..ingest import load
from ..ingest.cache import ModelCache
from ..ingest.intermediate import Progress
from ..trace import Trace

SHAPE = 2  # the shape of the kept data below: bumped when it changes


def _version() -> str:
    """The shape of the data and the code that derived it: facts kept by a build whose analyses
    differ (a health rule changed, say) are derived again, not shown."""
    core = Path(trace_module.__file__).parent  # the trace types, and patterns.py's rules
    sources = sorted(Path(analysis.__file__).parent.glob("*.py")) + sorted(core.glob("*.py"))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.read_bytes())
    return f"{SHAPE}-{digest.hexdigest()[:16]}"


VERSION = _version()


@dataclass(frozen=True)
class Fact:
    """A derived slot kept in the cache, and how it is written and read back; or, `keyed`, every
    slot whose key starts with `slot` (one per window or scope), the first `KEYED` of them."""

    slot: str  # its key in `trace.derived`, as the analysis names it
    dump: Callable[[Any], Any]  # to JSON-ready data
    read: Callable[[Any], Any]  # back; KeyError, TypeError or ValueError for unusable data
    keyed: bool = False


# A keyed fact keeps its first slots: those `info`, `summary` and the viewer's first screen ask
# for. Scopes visited later in the viewer are derived again in a later run (each kept slot is
# written again with every new one).
KEYED = 4


_GROUPS = ("checks", "repairs", "skipped")


def _dump_health(found: Health) -> dict[str, Any]:
    return {group: [asdict(f) for f in getattr(found, group)] for group in _GROUPS}


def _read_health(kept: Any) -> Health:
    return Health(**{group: [_finding(f) for f in kept[group]] for group in _GROUPS})


def _finding(kept: dict[str, Any]) -> Finding:
    found = Finding(**kept)
    numbers = [found.count, found.unchecked, *found.examples]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise TypeError("a finding's counts or examples: not whole numbers")
    return found


def _dump_rows(found: ShapeRows) -> dict[str, Any]:
    rows, call_rows, call_group = found
    return {
        "rows": [asdict(row) for row in rows],
        "call_rows": call_rows.tolist(),
        "call_group": call_group.tolist(),
    }


def _read_rows(kept: Any) -> ShapeRows:
    rows = [
        ShapeRow(**{**row, "work": Work(**row["work"]), "starts": tuple(row["starts"])})
        for row in kept["rows"]
    ]
    call_rows = np.asarray(kept["call_rows"], np.int64)
    call_group = np.asarray(kept["call_group"], np.int64)
    if call_rows.shape != call_group.shape or call_rows.ndim != 1:
        raise ValueError("the calls and their rows differ in length")
    return rows, call_rows, call_group


def _read_counts(kept: Any) -> dict[str, int]:
    if not isinstance(kept, dict) or list(kept) != list(attribution.RULES):
        raise KeyError("not a count for each rule")
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in kept.values()):
        raise TypeError("a count: not a whole number")
    return kept


def _read_steps(kept: Any) -> list[StepRow]:
    return [
        StepRow(
            _whole(row["name"], str),
            _whole(row["start_ns"]),
            _whole(row["dur_ns"]),
            _verdict(row["verdict"]),
            _whole(row["overlap_ns"]),
        )
        for row in kept
    ]


_NUMBER = (int, float)  # by `type`, so that a bool is not one
_EVIDENCE = {int, float, list}  # its numbers, and `covers`


def _verdict(kept: dict[str, Any]) -> Verdict:
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


def _whole(value: Any, kind: type = int) -> Any:
    if type(value) is not kind:  # a bool is not an int here
        raise TypeError(f"not {kind.__name__}: {value!r}")
    return value


_STAT_INTS = [f.name for f in fields(OpStat) if f.type == "int"]
_WORK_FIELDS = {f.name: f.type for f in fields(WorkTotals)}


def _read_stats(kept: Any) -> list[OpStat]:
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


def _read_bool(kept: Any) -> bool:
    if not isinstance(kept, bool):
        raise TypeError("not true or false")
    return kept


FACTS = {
    "health": Fact(health_module.KEY, _dump_health, _read_health),
    "shapes recorded": Fact(roofline.SHAPES_KEY, bool, _read_bool),
    "modelled calls": Fact(roofline.CALLS_KEY, int, _whole),
    "matmul kernels": Fact(tensor_cores.MATMUL_KEY, bool, _read_bool),
    "roofline rows": Fact(roofline.ROWS_KEY, _dump_rows, _read_rows),
    "gpu work placed by": Fact(attribution.PLACED_KEY, dict, _read_counts),
    "step rows": Fact(summary.STEPS_KEY, lambda rows: [asdict(r) for r in rows], _read_steps),
    "verdicts": Fact(verdict.KEY, asdict, _verdict, keyed=True),
    "op stats": Fact(ops.KEY, lambda rows: [asdict(r) for r in rows], _read_stats, keyed=True),
}


def _named(slot: str) -> str | None:
    """The fact that keeps `slot`, if one does."""
    for name, fact in FACTS.items():
        if slot == fact.slot or (fact.keyed and slot.startswith(fact.slot)):
            return name
    return None


class _Keeping(dict[str, Any]):
    """A trace's derived data that keeps each fact in the cache as it is first set, and reads a
    kept fact back only when it is first asked for (`info` reads no step's verdict)."""

    def __init__(self, derived: dict[str, Any], kept: dict[str, Any], keep: load.Keep) -> None:
        super().__init__(derived)
        self.kept, self.keep = kept, keep
        self.unread: dict[str, str] = {}  # slot: the fact that keeps it
        for name, data in kept.items():
            slots = data if FACTS[name].keyed else {FACTS[name].slot: data}
            self.unread.update((slot, name) for slot in slots)
        self.lock = threading.Lock()  # the viewer derives in worker threads

    def __contains__(self, slot: object) -> bool:
        return super().__contains__(slot) or (isinstance(slot, str) and self._read(slot))

    def __getitem__(self, slot: str) -> Any:
        if not super().__contains__(slot):
            self._read(slot)
        return super().__getitem__(slot)

    def get(self, slot: str, default: Any = None) -> Any:
        if not super().__contains__(slot):
            self._read(slot)
        return super().get(slot, default)

    def _read(self, slot: str) -> bool:
        """Whether the kept fact for `slot` read back (into its slot); one that does not is
        derived again, and that one kept."""
        with self.lock:
            name = self.unread.pop(slot, None)
            if name is None:
                return False
            fact, data = FACTS[name], self.kept[name]
            try:
                super().__setitem__(slot, fact.read(data[slot] if fact.keyed else data))
            except (KeyError, TypeError, ValueError):
                if fact.keyed:
                    del data[slot]
                else:
                    del self.kept[name]
                return False
            return True

    def __setitem__(self, slot: str, value: Any) -> None:
        super().__setitem__(slot, value)
        name = _named(slot)
        if name is None:
            return
        fact = FACTS[name]
        with self.lock:
            self.unread.pop(slot, None)
            if not fact.keyed and name not in self.kept:
                self.kept[name] = fact.dump(value)
            elif fact.keyed and len(slots := self.kept.setdefault(name, {})) < KEYED:
                slots[slot] = fact.dump(value)
            else:
                return
            self.keep(dict(self.kept))


def attach(trace: Trace, kept: dict[str, Any] | None, keep: load.Keep) -> None:
    """Have the kept facts read back into their slots when first asked for (those that do not
    read back are derived again), and keep those derived from now on."""
    known = {
        name: data
        for name, data in (kept or {}).items()
        if name in FACTS
        and (isinstance(data, dict) if FACTS[name].keyed else FACTS[name].slot not in trace.derived)
    }
    trace.derived = _Keeping(trace.derived, known, keep)


KEPT = load.Facts(VERSION, attach)


def load_trace(
    path: str | os.PathLike[str],
    progress: Progress | None = None,
    cache: ModelCache | None = None,
    workers: int | None = None,
) -> Trace:
    """ingest's `load_trace`, keeping the facts with the cached model (see there)."""
    return load.load_trace(path, progress, cache, workers, KEPT)
