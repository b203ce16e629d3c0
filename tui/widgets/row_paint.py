"""Painting one rasterised timeline row as Rich segments (text only, never markup)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style

from tui.model.present.raster import Cells

# Busy fraction -> glyph for cells where several slices meet (density, never blank).
_DENSITY = ((0.05, "·"), (0.35, "░"), (0.7, "▒"), (1.01, "▓"))
GAP_GLYPH = "─"
BAR = "█"  # a bar of one or two cells


@dataclass(frozen=True)
class Palette:
    """Styles for the row, looked up once per frame from the widget's component classes."""

    base: Style
    kinds: list[Style]  # bar style per kind (background colour)
    selected: Style
    partner: Style  # what the selection's flows join it to
    match: Style
    gap: Style  # a stream idle while another works
    gap_device: Style  # no stream busy: the GPU idle
    gap_selected: Style


def paint_cells(
    cells: Cells,
    kinds: npt.NDArray[np.int8],
    name_ids: npt.NDArray[np.int32],
    labels: list[str],
    palette: Palette,
    selected: int,
    matches: npt.NDArray[np.bool_] | None,
    gap_cells: npt.NDArray[np.int64] | None,
    selected_gap: int,
    partners: Collection[int],
    device_from: int,
) -> list[Segment]:
    """Segments for one row: labelled bars, density glyphs, idle gaps, empty space.

    Args:
        kinds: the kind of every slice; name_ids: its name id, into `labels` (printable names).
        matches: search matches by slice row, or None.
        gap_cells: per cell, the idle gap it lies in (-1 for none), or None; gaps from
            `device_from` on are whole-device gaps.
        partners: the slices the selection's flows lead to or come from.
    """
    joined = set(partners)
    segments: list[Segment] = []
    slice_of = cells.slice.tolist()
    counts = cells.count.tolist()
    busy = cells.busy.tolist()
    gaps = gap_cells.tolist() if gap_cells is not None else None
    near = cells.near.tolist()
    width = len(slice_of)
    x = 0
    while x < width:
        s = slice_of[x]
        if s >= 0:
            end = x + 1
            while end < width and slice_of[end] == s:
                end += 1
            style = palette.kinds[int(kinds[s])]
            text = _label(labels[int(name_ids[s])], end - x)
            if end - x <= 2:
                # Too narrow for a name: a solid block in the bar's colour, which shows in any
                # terminal (spaces on a background vanish without colour, or in a copy).
                colour = style.bgcolor or style.color
                style = palette.base + Style(color=colour) if colour else style
                text = BAR * (end - x)
            if s == selected:
                style = style + palette.selected
            elif s in joined:
                style = style + palette.partner
            elif matches is not None and matches[s]:
                style = style + palette.match
            segments.append(Segment(text, style))
            x = end
        elif counts[x] > 0:
            glyph = next(g for limit, g in _DENSITY if busy[x] < limit)
            kind_style = palette.kinds[int(kinds[near[x]])]
            style = Style(color=kind_style.bgcolor) if kind_style.bgcolor else kind_style
            if near[x] == selected:
                style = style + palette.selected
            elif near[x] in joined:
                style = style + palette.partner
            segments.append(Segment(glyph, palette.base + style))
            x += 1
        elif gaps is not None and gaps[x] >= 0:
            end = x + 1
            while end < width and gaps[end] == gaps[x] and slice_of[end] < 0 and counts[end] == 0:
                end += 1
            style = (
                palette.gap_selected
                if gaps[x] == selected_gap
                else palette.gap_device
                if gaps[x] >= device_from
                else palette.gap
            )
            segments.append(Segment(GAP_GLYPH * (end - x), palette.base + style))
            x = end
        else:
            end = x + 1
            while (
                end < width
                and slice_of[end] < 0
                and counts[end] == 0
                and (gaps is None or gaps[end] < 0)
            ):
                end += 1
            segments.append(Segment(" " * (end - x), palette.base))
            x = end
    return segments


def _label(name: str, width: int) -> str:
    """The name in a bar `width` (3 or more) cells wide, cut with an ellipsis where it does not
    fit."""
    return clip(" " + name, width)


def clip(text: str, width: int) -> str:
    """`text` in exactly `width` cells: padded, or cut with an ellipsis."""
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(text, width - 1) + "…" if width > 0 else ""
