"""The flame view's layout: a call tree as an icicle, one row per depth from a root node down,
each node as wide as its share of its parent's weight, in terminal cells. Nodes narrower than a
cell are left out (their parent's row shows the gap they leave)."""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.call_tree import CallTree


@dataclass(frozen=True)
class Span:
    x0: int  # first cell
    x1: int  # one past the last
    node: int


def icicle(tree: CallTree, root: int, rows: int, width: int) -> list[list[Span]]:
    """Up to `rows` rows of spans, the first the root across the whole width."""
    if width <= 0 or rows <= 0 or not tree.total[root]:
        return []
    out: list[list[Span]] = [[Span(0, width, root)]]
    level = [(0.0, float(width), root)]
    while len(out) < rows:
        below: list[tuple[float, float, int]] = []
        for a, b, node in level:
            whole = float(tree.total[node])
            x = a
            for kid in tree.children(node):
                weight = float(tree.total[kid])
                if weight <= 0:
                    continue
                w = (b - a) * weight / whole
                below.append((x, x + w, kid))
                x += w
        spans = [Span(round(a), round(b), n) for a, b, n in below if round(b) > round(a)]
        if not spans:
            break
        out.append(spans)
        level = [(a, b, n) for a, b, n in below if round(b) > round(a)]
    return out


def span_at(layout: list[list[Span]], row: int, x: int) -> Span | None:
    """The span under cell `x` of `row`, or None."""
    if not 0 <= row < len(layout):
        return None
    return next((s for s in layout[row] if s.x0 <= x < s.x1), None)
