"""The version of the facts kept with a cached model (facts.py): the shape of the kept data and
a digest of the code that derived them, so that facts kept by a build whose analyses differ (a
health rule changed, say) are derived again, not shown. Read from the sources' files, not their
modules, so that `info` on a cached trace (kept_info.py) checks it without importing them."""

from __future__ import annotations

import hashlib
from pathlib import Path

SHAPE = 3  # the shape of the kept data: bumped when it changes
_MODEL = Path(__file__).parent.parent


def _version() -> str:
    sources = (
        sorted((_MODEL / "analysis").glob("*.py"))
        + sorted(_MODEL.glob("*.py"))  # the trace types, and patterns.py's rules
        + [_MODEL / "present" / "info.py"]  # what `info` derives (its kept summary)
    )
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.read_bytes())
    return f"{SHAPE}-{digest.hexdigest()[:16]}"


VERSION = _version()
