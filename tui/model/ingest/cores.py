"""How many worker processes to use: TRACE_TUI_WORKERS, else the cores this process may use."""

from __future__ import annotations

import os


def default_workers() -> int:
    wanted = os.environ.get("TRACE_TUI_WORKERS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
