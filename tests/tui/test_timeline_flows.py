"""Flows and search on the timeline, driven with Pilot: from an op to its kernels and back, the
flow partners marked, search matches walked and zoomed to.

gpu_streams.json (see test_timeline.py): thread 7 runs aten::mm [0, 30) holding
cudaLaunchKernel [5, 15) -> gemm_kernel [20, 32) on stream 7, aten::add [40, 60) holding
cuLaunchKernel -> triton_add_kernel [54, 57) on stream 20, and cudaGraphLaunch [70, 75).
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from tests.deep_stack import write_deep_stack
from tests.tui.helpers import loaded, notes
from tui.model.present.details import slice_details
from tui.widgets.timeline import Timeline

US = 1000


def name(t):
    return t.trace.slice_name(t.selected) if t.selected >= 0 else None


@pytest.fixture
async def ui():
    async with loaded(DATA / "gpu_streams.json", (120, 30)) as (pilot, app):
        yield pilot, app.query_one(Timeline)


async def test_right_bracket_on_an_op_goes_to_the_first_kernel_it_caused(ui):
    pilot, t = ui
    await pilot.press("right_square_bracket")
    assert notes(t.app)[-1] == "Select a launch, a kernel or an op first."
    await pilot.press("right", "right")  # aten::add: its cuLaunchKernel started the triton kernel
    await pilot.press("right_square_bracket")
    assert name(t) == "triton_add_kernel"
    await pilot.press("left_square_bracket")
    assert name(t) == "cuLaunchKernel"


async def test_a_selected_launch_marks_its_kernel_and_brings_both_into_view(ui):
    pilot, t = ui
    await pilot.press("w")  # [23, 69) us: neither is in view
    t.select(t.lanes.get(0, 1).rows[0].item())  # cudaLaunchKernel [5, 15)
    await pilot.pause()
    assert name(t) == "cudaLaunchKernel"
    assert [t.trace.slice_name(p) for p in t.partners] == ["gemm_kernel<float, 128>"]
    assert t.window[0] <= 5 * US and t.window[1] >= 32 * US  # launch and kernel both shown
    assert t.window[1] - t.window[0] == 46 * US  # at the same zoom
    kernel_row = t.row_at(0)
    assert t.rows[kernel_row].lane == 1 and (1, 0) in t.selection.partner_rows


async def test_search_says_which_match_is_shown_and_n_walks_them(ui):
    pilot, t = ui
    await pilot.press("slash", *"graph", "enter")
    assert name(t) == "cudaGraphLaunch"
    assert notes(t.app)[-1].startswith("match 1 of 3 for 'graph'")
    await pilot.press("n")
    assert name(t) == "graph_kernel_a" and notes(t.app)[-1] == "match 2 of 3: graph_kernel_a"
    await pilot.press("N", "N")
    assert notes(t.app)[-1] == "match 3 of 3: graph_kernel_b"


async def test_a_tiny_match_is_zoomed_to_a_visible_size(tmp_path):
    deep = write_deep_stack(tmp_path / "deep.json")
    async with loaded(deep, (80, 24)) as (pilot, app):
        t = app.query_one(Timeline)
        await pilot.press("slash", *"gemm_2", "enter")
        assert name(t) == "gemm_2"
        t0, t1 = t.window
        cells = t.trace.slices.dur[t.selected] * t.cells_width / (t1 - t0)
        assert cells >= 6  # 8 us of a 359 us view was under 2 cells wide


def _events(path, events):
    path.write_text(json.dumps({"traceEvents": events}))
    return path


async def test_right_bracket_prefers_the_kernels_over_an_autograd_flow(tmp_path):
    events = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::convolution",
            "pid": 1,
            "tid": 1,
            "ts": 0,
            "dur": 20,
        },
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": 1,
            "tid": 1,
            "ts": 5,
            "dur": 5,
            "args": {"correlation": 9},
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": "conv_kernel",
            "pid": 0,
            "tid": 7,
            "ts": 12,
            "dur": 10,
            "args": {"correlation": 9},
        },
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "ConvolutionBackward0",
            "pid": 1,
            "tid": 2,
            "ts": 50,
            "dur": 20,
        },
        {
            "ph": "s",
            "cat": "fwdbwd",
            "name": "fwdbwd",
            "id": 3,
            "pid": 1,
            "tid": 1,
            "ts": 0,
            "bp": "e",
        },
        {
            "ph": "f",
            "cat": "fwdbwd",
            "name": "fwdbwd",
            "id": 3,
            "pid": 1,
            "tid": 2,
            "ts": 50,
            "bp": "e",
        },
    ]
    async with loaded(_events(tmp_path / "fb.json", events), (100, 30)) as (pilot, app):
        t = app.query_one(Timeline)
        conv = next(r for r in range(len(t.trace.slices)) if name_of(t, r) == "aten::convolution")
        t.select(conv)
        details = dict(slice_details(t.trace, conv))
        assert "starts" not in details and details["flows to"] == "ConvolutionBackward0"
        assert details["GPU work"].startswith("1 launched under it, 10 us in all")
        await pilot.press("right_square_bracket")
        assert name(t) == "conv_kernel"
        backward = next(
            r for r in range(len(t.trace.slices)) if name_of(t, r) == "ConvolutionBackward0"
        )
        assert "launched by" not in dict(slice_details(t.trace, backward))
        t.select(conv)
        await pilot.press("right_square_bracket", "left_square_bracket")
        assert name(t) == "cudaLaunchKernel"


def name_of(t, row):
    return t.trace.slice_name(row)
