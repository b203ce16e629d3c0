"""JSON documents as every report writes them: indented, one newline at the end."""

from __future__ import annotations

import math
from typing import Any

import orjson


def dumps(doc: object) -> bytes:
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:
        return orjson.dumps(_writable(doc), option=orjson.OPT_INDENT_2) + b"\n"


def exact(value: Any) -> Any:
    """A scalar as JSON keeps it exactly, else as its text: orjson refuses an integer past 64
    bits (a pid written as 30 digits) and writes an infinity as null. `info` keeps its summary
    this way, so that a cached `info` prints what the first one did."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int) and -(2**63) <= value < 2**64:
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return str(value)


def _writable(doc: Any) -> Any:
    """`doc` with what orjson cannot write made text: a file name that is not UTF-8 (its odd
    bytes surrogate-escaped by Python) gets them as `\\xff`, as the text outputs show them, and
    an integer past 64 bits its digits (`exact`)."""
    if isinstance(doc, str):
        return doc.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(doc, int) and not isinstance(doc, bool):
        return exact(doc)
    if isinstance(doc, dict):
        return {_writable(k): _writable(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_writable(v) for v in doc]
    return doc
