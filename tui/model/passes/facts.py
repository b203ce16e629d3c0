"""What `info` and `summary` derive from a whole trace, derived once and kept with the cached
model: the health checks (whose args reads cost seconds on a big trace) and whether shapes were
recorded (which decodes the first ops' args from the file again).

`load_trace` here is ingest's, with these facts: on a cache hit they are put back into the
analyses' own slots of `trace.derived`, so `health(trace)` and `shapes_recorded(trace)` find
them and compute nothing.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from ..analysis import health as health_module
from ..analysis import roofline
from ..analysis.health import Finding, Health
from ..ingest import load
from ..ingest.cache import ModelCache
from ..ingest.intermediate import Progress
from ..trace import Trace

VERSION = 1  # the shape of the data below: bumped when it changes


def derive(trace: Trace) -> dict[str, Any]:
    """The facts of a trace, JSON-ready."""
    found = health_module.health(trace)
    return {
        "health": {group: [asdict(f) for f in getattr(found, group)] for group in _GROUPS},
        "shapes recorded": roofline.shapes_recorded(trace),
    }


def restore(trace: Trace, kept: dict[str, Any]) -> None:
    """Put kept facts into the trace's derived data (all or, when any is unusable, none).

    Raises:
        KeyError, TypeError, ValueError: `kept` is not what `derive` writes.
    """
    groups = {group: [_finding(f) for f in kept["health"][group]] for group in _GROUPS}
    shapes = kept["shapes recorded"]
    if not isinstance(shapes, bool):
        raise TypeError("shapes recorded: not a bool")
    trace.derived[health_module.KEY] = Health(**groups)
    trace.derived[roofline.SHAPES_KEY] = shapes


_GROUPS = ("checks", "repairs", "skipped")
FACTS = load.Facts(VERSION, derive, restore)


def _finding(kept: dict[str, Any]) -> Finding:
    found = Finding(**kept)
    if not (isinstance(found.count, int) and all(isinstance(r, int) for r in found.examples)):
        raise TypeError("a finding's count or examples: not whole numbers")
    return found


def load_trace(
    path: str | os.PathLike[str],
    progress: Progress | None = None,
    cache: ModelCache | None = None,
    workers: int | None = None,
) -> Trace:
    """ingest's `load_trace`, keeping the facts with the cached model (see there)."""
    return load.load_trace(path, progress, cache, workers, FACTS)
