"""Counter rows as block characters: scaled to the highest value in view, or to a floor."""

from __future__ import annotations

import numpy as np

from tui.model.present.raster import sparkline

TS = np.asarray([0, 100, 200, 300], np.int64)


def test_bars_are_scaled_to_the_highest_value_in_view():
    spark, values = sparkline(TS, np.asarray([1.0, 2.0, 4.0, 8.0]), 0, 400, 4)
    assert spark == "▁▂▄█" and values.tolist() == [1.0, 2.0, 4.0, 8.0]


def test_a_floor_above_the_values_keeps_small_ones_low_but_visible():
    """8 bytes against a MiB floor: every cell holding some is the lowest bar, none full."""
    spark, values = sparkline(TS, np.asarray([0.0, 8.0, 8.0, 0.0]), 0, 400, 4, float(1 << 20))
    assert spark == " ▁▁ " and values.max() == 8.0
    # Values above the floor scale to their own highest, as without one.
    assert sparkline(TS, np.asarray([1.0, 2.0, 4.0, 8.0]) * 2**21, 0, 400, 4, 2**20)[0] == "▁▂▄█"
