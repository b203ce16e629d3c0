"""JSON documents as every report writes them: indented, one newline at the end."""

from __future__ import annotations

import orjson


def dumps(doc: object) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
