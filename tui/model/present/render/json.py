"""JSON documents as every report writes them: indented, one newline at the end."""

from __future__ import annotations

from typing import Any

import orjson


def dumps(doc: object) -> bytes:
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:
        return orjson.dumps(_writable(doc), option=orjson.OPT_INDENT_2) + b"\n"


def _writable(doc: Any) -> Any:
    """`doc` with what orjson cannot write made text: a file name that is not UTF-8 (its odd
    bytes surrogate-escaped by Python) gets them as `\\xff`, as the text outputs show them, and
    an integer past 64 bits (a pid written as 30 digits) is written as its digits in a string,
    as `info` keeps device properties of that size."""
    if isinstance(doc, str):
        return doc.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(doc, int) and not isinstance(doc, bool) and not -(2**63) <= doc < 2**64:
        return str(doc)
    if isinstance(doc, dict):
        return {_writable(k): _writable(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_writable(v) for v in doc]
    return doc
