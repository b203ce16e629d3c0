"""Reading traces: sources, the model cache, the intermediate every importer fills, assembly.

One sub-package per input format (today `chrome_json`), registered in `formats`.
"""

from __future__ import annotations

from .formats import list_traces
from .load import load_trace

__all__ = ["list_traces", "load_trace"]
