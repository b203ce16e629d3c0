"""The flame view's layout: a call tree as an icicle, one row per depth from a root node down,
each node as wide as its share of its parent's weight, in terminal cells. A chain of frames that
each hand one callee at least 99% of their time (tree_report.chain: the Python wrappers above a
`forward`) takes one row, shown by its last frame, so a small terminal still reaches the model.
Nodes narrower than a cell are left out (their parent's row shows the gap they leave)."""

from __future__ import annotations

import msgspec

from ..analysis.call_tree import CallTree
from ..patterns import MODULE_PREFIX as MODULE
from .tree_report import chain


class Span(msgspec.Struct, frozen=True):
    x0: int  # first cell
    x1: int  # one past the last
    node: int  # the last frame of its chain (its children are the next row's)
    shown: int = -1  # the frame its cells name: the chain's innermost module, else `node`


def icicle(tree: CallTree, root: int, rows: int, width: int) -> list[list[Span]]:
    """Up to `rows` rows of spans, the first the root across the whole width."""
    if width <= 0 or rows <= 0 or not tree.total[root]:
        return []
    out: list[list[Span]] = [[Span(0, width, root, root)]]
    level = [(0.0, float(width), root)]
    while len(out) < rows:
        below: list[tuple[float, float, int]] = []
        for a, b, node in level:
            # Children overlapping each other can add up to more than their parent (its self
            # goes negative): they share its width then, never more.
            kids_total = sum(float(tree.total[k]) for k in tree.children(node) if tree.total[k] > 0)
            whole = max(float(tree.total[node]), kids_total)
            x = a
            for kid in tree.children(node):
                weight = float(tree.total[kid])
                if weight <= 0:
                    continue
                w = (b - a) * weight / whole
                below.append((x, x + w, kid))
                x += w
        wide = [(a, b, _span(tree, a, b, n)) for a, b, n in below if round(b) > round(a)]
        if not wide:
            break
        out.append([span for _, _, span in wide])
        # The next row splits each chain's last frame among its callees.
        level = [(a, b, span.node) for a, b, span in wide]
    return out


def _span(tree: CallTree, a: float, b: float, first: int) -> Span:
    nodes = chain(tree, first)
    modules = [n for n in nodes if tree.label(n).startswith(MODULE)]
    return Span(round(a), round(b), nodes[-1], modules[-1] if modules else nodes[-1])
