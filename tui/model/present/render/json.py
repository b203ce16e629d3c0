"""JSON documents as every report writes them: indented, one newline at the end."""

from __future__ import annotations

from typing import Any

import orjson


def dumps(doc: object) -> bytes:
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:
        # A file name that is not UTF-8 (its odd bytes surrogate-escaped by Python) cannot be
        # JSON text: those bytes are written as `\xff`, as the text outputs show them.
        return orjson.dumps(_utf8(doc), option=orjson.OPT_INDENT_2) + b"\n"


def _utf8(doc: Any) -> Any:
    if isinstance(doc, str):
        return doc.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(doc, dict):
        return {_utf8(k): _utf8(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_utf8(v) for v in doc]
    return doc
