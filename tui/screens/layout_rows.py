"""The rows a screen has for its timeline and the details box under it: from the last layout, or
before the first one from the terminal's height and the other widgets' CSS (so that the first
frame already gives the details the rows the lanes leave spare)."""

from __future__ import annotations

from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget


def rows_for(screen: Screen[None], timeline: Widget, box: Widget) -> int | None:
    """The rows `timeline` and `box` share on `screen`: its height less the other widgets shown;
    None before the first layout where a widget's CSS height needs a layout to resolve."""
    # From the screen's height, not the two boxes' current ones: those lag a resize.
    others = [w for w in screen.children if w.display and w not in (timeline, box)]
    if timeline.size.height:
        return screen.size.height - sum(w.outer_size.height for w in others)
    terminal = screen.app.size
    planned = [_planned_height(w, terminal) for w in others]
    if None in planned:
        return None
    return terminal.height - sum(h for h in planned if h is not None)


def _planned_height(widget: Widget, terminal: Size) -> int | None:
    """The rows a widget will take before it is first laid out, from its CSS: a height in cells
    or `auto`; None for another (a fraction or a percentage) or one with bounds, which only a
    layout resolves."""
    styles = widget.styles
    height = styles.height
    if styles.min_height is not None or styles.max_height is not None:
        return None  # bounds a layout applies: left to it
    if height is None or height.is_auto:
        width = terminal.width - styles.gutter.width - styles.margin.width
        rows = widget.get_content_height(terminal, terminal, width) + styles.gutter.height
    elif height.is_cells:
        rows = int(height.value)
        if styles.box_sizing == "content-box":
            rows += styles.gutter.height
    else:
        return None
    return rows + styles.margin.height
