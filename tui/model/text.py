"""Making text from a trace safe to show: nothing in it may act on the terminal."""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the bidirectional overrides and isolates that reorder text.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with every control character shown as an escape (`\\x1b`, `\\u202e`)."""
    return _UNSAFE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# The longest text shown for one name or value; the rest is counted, not drawn (a 100 MB name
# must not stall a frame).
MAX_SHOWN = 2000


def shown(text: str, limit: int = MAX_SHOWN) -> str:
    """`printable(text)`, cut to `limit` characters with a note of the full length."""
    if len(text) <= limit:
        return printable(text)
    return printable(text[:limit]) + f"… ({len(text):,} characters)"


def counted(n: int, what: str) -> str:
    """ "1 replay", "3 replays": a count with its noun (plural with an s)."""
    return f"{n:,} {what}{'s' * (n != 1)}"
