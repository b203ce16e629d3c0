"""What `info` and `summary` derive from a whole trace, derived once per trace content and kept
with the cached model: the health checks (whose args reads cost seconds on a training trace),
whether shapes were recorded (which decodes the first ops' args from the file again), the
roofline's by-shape rows (every modelled call's args decoded again) and how many calls it
models, whether any kernel is a GEMM or convolution, how many pieces of GPU work each
attribution rule placed (the op tree over every slice), every step's verdict, the first
windows' verdicts and scopes' op tables (what the summary and the viewer's first screen show),
what graph replays and captures read from args (each replay's graph id, each capture
launch's kernel name: decoded from the file again otherwise), and each communication kernel's
collective (its kind, group, sequence number and size, read from args: a rank pass over
cached ranks decoded each rank's args again); and `info`'s whole summary, which kept_info.py
reads without loading the model at all.

Each fact is kept the moment an analysis derives it into its slot of `trace.derived`, and put
back into that slot when the same content is loaded again, so `health(trace)` finds it and
checks nothing. Nothing is derived ahead of need: `summary` or a rank pass filling the cache
pays for no health check it does not show.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import msgspec

from ..analysis import attribution
from ..analysis.health import Finding, Health
from ..ingest import load
from ..ingest.cache import ModelCache
from ..ingest.intermediate import Progress
from ..present import info
from ..trace import Trace
from .facts_version import VERSION


class Fact(msgspec.Struct, frozen=True):
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
    return {group: [msgspec.to_builtins(f) for f in getattr(found, group)] for group in _GROUPS}


def _read_health(kept: Any) -> Health:
    return Health(**{group: [_finding(f) for f in kept[group]] for group in _GROUPS})


def _finding(kept: dict[str, Any]) -> Finding:
    found = Finding(**kept)
    numbers = [found.count, found.unchecked, *found.examples]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise TypeError("a finding's counts or examples: not whole numbers")
    return found


def _read_counts(kept: Any) -> dict[str, int]:
    if not isinstance(kept, dict) or list(kept) != list(attribution.RULES):
        raise KeyError("not a count for each rule")
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in kept.values()):
        raise TypeError("a count: not a whole number")
    return kept


def _whole(value: Any, kind: type = int) -> Any:
    if type(value) is not kind:  # a bool is not an int here
        raise TypeError(f"not {kind.__name__}: {value!r}")
    return value


def _read_graph_ids(kept: Any) -> dict[int, int | None]:
    found = {_whole(row): gid if gid is None else _whole(gid) for row, gid in kept}
    if len(found) != len(kept):
        raise ValueError("a replay's first kernel twice")
    return found


def _read_bool(kept: Any) -> bool:
    if not isinstance(kept, bool):
        raise TypeError("not true or false")
    return kept


def _later(name: str) -> Callable[[Any], Any]:
    """A codec of codecs.py, imported when first used (see there)."""

    def run(data: Any) -> Any:
        from . import codecs

        return getattr(codecs, name)(data)

    return run


# By the slot each analysis names (its KEY constants; a test checks the two agree), so that
# loading imports none of the analyses whose facts codecs.py reads.
FACTS = {
    "health": Fact("health", _dump_health, _read_health),
    "shapes recorded": Fact("shapes recorded", bool, _read_bool),
    "modelled calls": Fact("modelled calls", int, _whole),
    "matmul kernels": Fact("has matmul kernels", bool, _read_bool),
    "roofline rows": Fact("roofline rows", _later("dump_rows"), _later("read_rows")),
    "gpu work placed by": Fact(attribution.PLACED_KEY, dict, _read_counts),
    "step rows": Fact("step_rows", _later("dump_all"), _later("read_steps")),
    "verdicts": Fact("verdict ", msgspec.to_builtins, _later("read_verdict"), keyed=True),
    "op stats": Fact("op_stats ", _later("dump_all"), _later("read_stats"), keyed=True),
    "graph captures": Fact("graph captures", _later("dump_all"), _later("read_captures")),
    "graph ids": Fact("graph ids", lambda ids: list(ids.items()), _read_graph_ids),
    "collectives": Fact("collectives", _later("dump_all"), _later("read_collectives")),
    # JSON-ready as it is; kept_info.py reads it back without loading the model.
    "info": Fact(info.KEY, dict, info.read_kept),
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
            if fact.keyed and len(self.kept.get(name, {})) >= KEYED:
                return
            if not fact.keyed and name in self.kept:
                return
            try:
                data = fact.dump(value)
            except (TypeError, ValueError):  # not JSON's (a numpy number, say): derived next time
                return
            if fact.keyed:
                self.kept.setdefault(name, {})[slot] = data
            else:
                self.kept[name] = data
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
