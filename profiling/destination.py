"""Where a run writes its trace, checked before torch is imported (two seconds), so that a
mistyped folder is said at once; and the one error a run reports."""

from __future__ import annotations

import os
from pathlib import Path


class ProfilingError(Exception):
    """A run could not start or its trace could not be written; the message says why."""


def check_writable(out: Path) -> None:
    if out.is_dir():
        raise ProfilingError(f"{out}: is a folder; give a file name ending in .json or .json.gz")
    parent = out.parent
    if not parent.is_dir():
        raise ProfilingError(f"{out}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise ProfilingError(f"{out}: cannot write to folder {parent}")
