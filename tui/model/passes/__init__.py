"""Passes over whole traces: loading with what is derived once kept in the model cache (facts),
`info` read from those facts without a load (kept_info), and the summary pass over a rank set
(ranks). Above both ingest and analysis; `present` never imports it (it renders what a pass
found)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .facts import load_trace

__all__ = ["load_trace"]


def __getattr__(name: str) -> Any:
    # Imported when first asked for (PEP 562): `info` on a cached trace reads its kept facts
    # (kept_info.py) without importing the analyses.
    if name != "load_trace":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .facts import load_trace

    return load_trace
