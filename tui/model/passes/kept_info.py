"""`info` on a cached trace without loading it: the summary a run before kept beside the cached
model (facts.py's "info"), read with neither numpy nor the analyses imported. Those imports were
most of a cached `info`'s time; this hashes the file's edges for its key and the analyses'
sources for the facts' version (about 1 ms), and reads one small JSON file."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from ..ingest.cache_folder import CacheFolder
from ..present import info
from .facts_version import VERSION


def kept_info(path: str, folder: CacheFolder) -> dict[str, Any] | None:
    """`info`'s summary of the file at `path` as kept in `folder`; None when none is kept (or it
    does not read back), and for a folder or stdin, which `load_trace` resolves first."""
    if str(Path(path)) == "-":  # as the load tells stdin
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        key = folder.key(path)
    except OSError:
        return None  # the load says why, in its own words
    kept = folder.facts(key, VERSION)
    if kept is None or info.KEY not in kept:
        return None
    try:
        content = info.read_kept(kept[info.KEY])
    except (KeyError, TypeError):
        return None
    folder.used(key)
    return info.named(content, str(Path(path)), None)
