"""The rules that used to live in the App and the Timeline, as pure functions: scopes, table rows
to slices, the step at a time, row/sibling/match moves and the gap cells of a row."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import DATA, row_named
from tui.model.analysis.gaps import idle_gaps
from tui.model.analysis.memory import OUTSIDE_OPS
from tui.model.analysis.ops import UNLAUNCHED, op_rows
from tui.model.analysis.scope import Scope
from tui.model.analysis.steps import step_at
from tui.model.ingest import load_trace
from tui.model.present import navigate as nav
from tui.model.present.raster import gap_cells
from tui.model.present.rows import DisplayRow, LaneRows, RowSlices, layout
from tui.model.present.scopes import scope_named

US = 1000


@pytest.fixture(scope="module")
def nested():
    # ProfilerStep#1 [0, 100) us and #2 [100, 160) us after the 100 us origin shift.
    return load_trace(DATA / "nested_cpu.json")


@pytest.fixture(scope="module")
def gpu():
    return load_trace(DATA / "gpu_streams.json")


def test_step_at_a_time(nested):
    assert step_at(nested, 50 * US) == ("ProfilerStep#1", 0, 100 * US)
    assert step_at(nested, 100 * US) == ("ProfilerStep#2", 100 * US, 160 * US)
    assert step_at(nested, 160 * US) is None  # ends are open


def test_scopes_from_the_view_and_the_selection(nested):
    view = (10 * US, 20 * US)
    assert scope_named(nested, "view", view, -1).scope == Scope(10 * US, 20 * US)
    addmm = row_named(nested, "aten::addmm")  # in step 1
    step = scope_named(nested, "step", (0, 1), addmm)
    assert (step.name, step.label, step.scope) == (
        "step",
        "step ProfilerStep#1",
        Scope(0, 100 * US),
    )
    # No selection: the step at the view's centre.
    assert scope_named(nested, "step", (120 * US, 140 * US), -1).label == "step ProfilerStep#2"
    sub = scope_named(nested, "subtree", view, addmm)
    assert (sub.name, sub.scope) == ("subtree", Scope(root=addmm))
    # What does not apply falls through: no step at the centre, no selection -> the trace.
    assert scope_named(nested, "step", (170 * US, 180 * US), -1).name == "trace"
    assert scope_named(nested, "subtree", view, -1).scope == Scope()


def test_a_table_row_names_its_slices(nested, gpu):
    steps = op_rows(nested, "ProfilerStep*")
    assert [nested.slice_name(int(r)) for r in steps] == ["ProfilerStep#1", "ProfilerStep#2"]
    linear = op_rows(nested, "aten::linear")
    assert len(linear) == 2 and (np.diff(nested.slices.start[linear]) > 0).all()
    assert len(op_rows(gpu, UNLAUNCHED)) == 0 and len(op_rows(gpu, OUTSIDE_OPS)) == 0
    assert len(op_rows(nested, "no such op")) == 0


def test_row_moves_skip_process_headers():
    rows = [
        DisplayRow(0, -1, 0),
        DisplayRow(0, 0, 0),
        DisplayRow(0, 0, 1),
        DisplayRow(1, -1, 0),
        DisplayRow(1, -1, 0, counter=0),
    ]
    assert nav.row_move(rows, 1, 1) == 2
    assert nav.row_move(rows, 2, 1) == 4  # over the header to the counter row
    assert nav.row_move(rows, 1, -1) is None  # only a header above
    assert nav.row_move(rows, 4, 1) is None


def _slices(starts, durs, rows=None):
    start = np.asarray(starts, np.int64)
    end = start + np.asarray(durs, np.int64)
    before = np.concatenate(([0], np.cumsum(durs)))[:-1].astype(np.int64)
    ids = np.asarray(rows if rows is not None else range(len(start)), np.int64)
    return RowSlices(ids, start, end, before, start[end == start])


def test_sibling_moves_from_the_selection_or_from_the_view():
    row = _slices([0, 10, 20, 30], [5, 5, 5, 5], rows=[4, 5, 6, 7])
    assert nav.sibling(row, 5, 1, (0, 100)) == 6
    assert nav.sibling(row, 5, -1, (0, 100)) == 4
    assert nav.sibling(row, 7, 1, (0, 100)) == -1  # the last one
    # Selection elsewhere: the first slice from the view's start, or the last before its end.
    assert nav.sibling(row, 99, 1, (12, 28)) == 6
    assert nav.sibling(row, -1, -1, (12, 28)) == 6
    assert nav.sibling(_slices([], []), -1, 1, (0, 1)) == -1


def test_focus_time_is_the_view_middle_held_inside_the_selection(nested):
    addmm = row_named(nested, "aten::addmm")  # [20, 50) us
    assert nav.focus_time(nested, addmm, (30 * US, 40 * US)) == 35 * US  # the view's middle
    assert nav.focus_time(nested, addmm, (0, 1)) == 20 * US  # held inside the selection
    assert nav.focus_time(nested, addmm, (60 * US, 80 * US)) == 50 * US - 1
    assert nav.focus_time(nested, -1, (10, 30)) == 20


def test_matches_cycle_and_start_from_the_view(nested):
    matches = op_rows(nested, "aten::linear")  # at 10 us and 100 us
    first, second = (int(m) for m in matches)
    assert nav.first_match_from(nested, matches, 50 * US) == second
    assert nav.first_match_from(nested, matches, 150 * US) == first  # cycles
    assert nav.next_match(nested, matches, first, 1, 0) == second
    assert nav.next_match(nested, matches, second, 1, 0) == first
    assert nav.next_match(nested, matches, -1, -1, 50 * US) == first  # the one before the view
    assert nav.next_match(nested, np.zeros(0, np.int64), -1, 1, 0) == -1


def test_gap_cells_mark_the_cells_whose_middle_is_idle(gpu):
    gaps = idle_gaps(gpu)
    lane = int(gaps.lane[0])  # stream 7: idle [32, 80), [84, 85), [89, 90) us
    cells = gap_cells(gaps, lane, 0, 100 * US, 10)  # 10 us a cell, middles at 5, 15, ... 95
    assert cells is not None
    # The GPU idle (no stream busy: [32, 54) and [57, 80), gaps 3 and 4) wins over the stream's
    # own gap 0, which shows where stream 20 runs; 85 us: [84, 85) has ended.
    assert cells.tolist() == [-1, -1, -1, 3, 3, 0, 4, 4, -1, -1]
    assert gap_cells(gaps, lane, 0, 100 * US, 10, selected=0).tolist()[3:8] == [0] * 5
    other = next(lane.index for lane in gpu.lanes if lane.index != int(gaps.lane[0]))
    # Stream 20 has no gap of its own (one kernel), but the GPU's idle shows on it too.
    assert gap_cells(gaps, other, 0, 100 * US, 10).tolist() == [-1, -1, -1, 3, 3, -1, 4, 4, -1, -1]
    assert gap_cells(gaps, other, 0, 30 * US, 10) is None
    assert any(r.lane == lane for r in layout(gpu, LaneRows(gpu)))


def test_the_peak_window_shows_the_climb():
    ts = np.asarray([0, 10, 20, 30, 40], np.int64) * US
    values = np.asarray([0, 0, 50, 100, 100], np.float64)
    # Halfway up (50) last at 20 us, the peak at 30 us: from 15 us to as far again after it.
    assert nav.rise_window(ts, values, 30 * US, 100 * US) == (15 * US, 40 * US)
    assert nav.rise_window(ts[3:], values[3:], 30 * US, 100 * US) is None  # starts at its peak
