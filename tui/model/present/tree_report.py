"""`trace-tui summary FILE --tree`: the call tree (analysis/call_tree.py) to a depth, as text,
Markdown or JSON.

Text and Markdown print a node per line, indented by depth (Markdown with `·`), heaviest first;
a chain of frames that each call one frame holding at least 99% of their weight (the Python
wrappers above `forward`) is one line, `first › … › last (+N frames)`, with the last frame's
numbers, and counts as one level (in JSON too). Nodes under `min_share` of the root are left
out, counted and summed.

JSON schema: path, weight ("cpu" | "gpu"), view ("top-down" | "bottom-up" | "modules" |
  "module classes"),
  root: {name, total_ns, self_ns, calls, frames (the joined chain's names, first to last),
  children: [...], hidden (children under min_share of the root left out), hidden_ns} to
  `depth` levels; name and numbers are the chain's last frame's.
"""

from __future__ import annotations

from typing import Any

from ..analysis.attribution import attribute
from ..analysis.call_tree import CallTree
from ..patterns import MODULE_PREFIX as MODULE
from ..text import printable
from ..timescale import format_duration
from ..trace import Trace
from .render import lines
from .render.json import dumps
from .table_spec import Grid, Totals
from .tree_table import TREE, TreeLine

CHAIN_SHOWN = 3  # a longer joined chain shows its first and last names only


JOINED = 0.99  # a frame whose one callee holds this much of its weight is joined to it


def chain(tree: CallTree, node: int) -> list[int]:
    """`node` and the frames below it that each call one frame only, which holds at least
    JOINED of their weight (Python wrappers: their own time is that little)."""
    out = [node]
    while True:
        kids = [k for k in tree.children(out[-1]) if tree.total[k]]
        if len(kids) != 1 or tree.total[kids[0]] < JOINED * tree.total[out[-1]]:
            return out
        out.append(kids[0])


def visible(tree: CallTree, node: int, least: float) -> tuple[list[int], int, int]:
    """The children of `node` with weight: those of at least `least` (heaviest first), how many
    lighter ones there are, and their weight."""
    kids = [k for k in tree.children(node) if tree.total[k]]
    shown = [k for k in kids if tree.total[k] >= least]
    return shown, len(kids) - len(shown), sum(int(tree.total[k]) for k in kids[len(shown) :])


def chain_label(tree: CallTree, nodes: list[int]) -> str:
    if len(nodes) <= CHAIN_SHOWN:
        return " › ".join(tree.label(n) for n in nodes)
    hidden = len(nodes) - 2
    return f"{tree.label(nodes[0])} › … › {tree.label(nodes[-1])} (+{hidden} frames)"


def tree_lines(tree: CallTree, depth: int, min_share: float, indent: str = "  ") -> list[TreeLine]:
    """The lines of the tree to `depth` levels, heaviest first, leaving out children under
    `min_share` of the root (one line counts them)."""
    root = int(tree.total[0])
    out: list[TreeLine] = []

    def walk(node: int, level: int) -> None:
        nodes = chain(tree, node) if node else [0]
        last = nodes[-1]
        calls = int(tree.calls[last]) if last and not tree.is_thread(last) else None
        total, own = int(tree.total[last]), int(tree.self_[last])
        out.append(TreeLine(level, chain_label(tree, nodes), indent, total, own, calls))
        if level + 1 >= depth:
            return
        shown, hidden, rest = visible(tree, last, min_share * root)
        for k in shown:
            walk(k, level + 1)
        if hidden:
            more = f"({hidden} more, {format_duration(rest)})"
            out.append(TreeLine(level, more, indent, rest, more=hidden))

    walk(0, 0)
    return out


def _view(tree: CallTree, depth: int, min_share: float, markdown: bool) -> Grid:
    found = tree_lines(tree, depth, min_share, "· " if markdown else "  ")
    return TREE.view(found, Totals(root_ns=int(tree.total[0]))).grid()


def as_text(
    trace: Trace, tree: CallTree, view: str, depth: int, min_share: float, markdown: bool
) -> str:
    head = f"{printable(trace.path)}: {view} call tree by {tree.weight.upper()} time"
    out = [f"### trace-tui tree: `{head}`" if markdown else head]
    why = empty_reason(trace, tree, view)
    if why is not None:
        out.append(why)
        return "\n".join(out) + "\n"
    outside = unlaunched_ns(trace) if tree.weight == "gpu" else 0
    if outside:
        out.append(
            f"({format_duration(outside)} of GPU work was launched outside the trace: no call "
            "path holds it)"
        )
    # Text: numbers in fixed columns, the names after them in full, indented.
    out += lines(_view(tree, depth, min_share, markdown), markdown, layout="name_last")
    return "\n".join(out) + "\n"


def as_csv(trace: Trace, tree: CallTree, view: str, depth: int, min_share: float) -> list[Grid]:
    """The lines `as_text` prints (empty where the tree has nothing to show)."""
    if empty_reason(trace, tree, view) is not None:
        return [TREE.view([]).grid()]
    return [_view(tree, depth, min_share, markdown=False)]


def empty_reason(trace: Trace, tree: CallTree, view: str) -> str | None:
    """Why a tree has nothing to show, and what to do instead; None when it has."""
    if tree.total[0]:
        return None
    if view.startswith("module") and not any(n.startswith(MODULE) for n in trace.names):
        return (
            "no nn.Module frames in this trace (profile with with_stack=True or with_modules=True "
            "for them): the top-down view has the rest"
        )
    if tree.weight == "gpu":
        return "no GPU time under these call paths: CPU time (x, --weight cpu) has them"
    return "no CPU time in this scope"


def unlaunched_ns(trace: Trace) -> int:
    """GPU work whose launch is not in the trace: no call path holds it."""
    att = attribute(trace)
    return int(trace.slices.dur[att.work[att.launch < 0]].sum())


def as_json(trace: Trace, tree: CallTree, view: str, depth: int, min_share: float) -> bytes:
    root = int(tree.total[0])

    def node_json(node: int, level: int) -> dict[str, Any]:
        nodes = chain(tree, node) if node else [0]
        last = nodes[-1]
        out: dict[str, Any] = {
            "name": tree.label(last),
            "frames": [tree.label(n) for n in nodes],
            "total_ns": int(tree.total[last]),
            "self_ns": int(tree.self_[last]),
            "calls": int(tree.calls[last]),
        }
        if level + 1 < depth:
            shown, out["hidden"], out["hidden_ns"] = visible(tree, last, min_share * root)
            out["children"] = [node_json(k, level + 1) for k in shown]
        return out

    doc = {"path": trace.path, "weight": tree.weight, "view": view, "root": node_json(0, 0)}
    return dumps(doc)
