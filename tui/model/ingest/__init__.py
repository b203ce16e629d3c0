"""Reading traces: sources, the model cache, the intermediate every importer fills, assembly.

One sub-package per input format (today `chrome_json`), registered in `formats`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .formats import list_traces
    from .load import load_trace

__all__ = ["list_traces", "load_trace"]
_WHERE = {"list_traces": ".formats", "load_trace": ".load"}


def __getattr__(name: str) -> Any:
    # Imported when first asked for (PEP 562): `info` on a cached trace reads the cache folder,
    # a module of this package, without importing the importers and numpy.
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name], __name__), name)
