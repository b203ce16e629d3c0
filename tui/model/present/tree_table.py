"""The call tree as a table: one line per node shown (a joined chain is one), indented by its
level, and a line per group of lighter children left out."""

from __future__ import annotations

import msgspec

from ..text import printable
from ..timescale import format_duration
from . import vocabulary as v
from .table_spec import Column, Table, Totals, share


class TreeLine(msgspec.Struct, frozen=True):
    """One line of the tree: a node (its chain's label and last frame's numbers), or the
    lighter children left out under one (`more`: how many; `total_ns`: their weight)."""

    level: int
    name: str
    indent: str  # "  " or "· " per level, as the text or Markdown indents it
    total_ns: int
    self_ns: int | None = None
    calls: int | None = None  # None for the root (it is no call) and a `more` line
    more: int = 0


def _total(line: TreeLine) -> int:
    return line.total_ns


def _weight_text(line: TreeLine, totals: Totals) -> str:
    return "" if line.more else format_duration(line.total_ns)


def _share_text(line: TreeLine, totals: Totals) -> str:
    return "" if line.more else share(_total, "root_ns", digits=1)(line, totals)


def _self_text(line: TreeLine, _: Totals) -> str:
    return format_duration(line.self_ns) if line.self_ns is not None and not line.more else ""


def _calls_text(line: TreeLine, _: Totals) -> str:
    return f"{line.calls:,}" if line.calls is not None else ""


def _name_text(line: TreeLine, _: Totals) -> str:
    return printable(line.indent * line.level + ("  " * bool(line.more)) + line.name)


TREE: Table[TreeLine] = Table(
    "tree",
    (
        Column(
            "level", "Level", lambda t: t.level, lambda t, _: str(t.level), "level", needs="json"
        ),
        Column("total", v.TOTAL, _total, _weight_text, "total_ns"),
        Column("total", v.TOTAL_PCT, _total, _share_text, None, "root_ns"),
        Column(
            "self",
            v.SELF,
            lambda t: t.self_ns or 0,
            _self_text,
            "self_ns",
            json_value=lambda t: t.self_ns,
        ),
        Column(
            "calls",
            v.CALLS,
            lambda t: t.calls or 0,
            _calls_text,
            "calls",
            json_value=lambda t: t.calls,
        ),
        Column("name", v.NAME, lambda t: t.name, _name_text, "name", numeric=False),
        Column("more", "More", lambda t: t.more, lambda t, _: "", "hidden", needs="json"),
    ),
    "total",
)
