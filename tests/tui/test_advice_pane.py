"""The next-steps pane (A) as a user drives it: the list with its bounds, the evidence of the
highlighted one, enter to the slice that shows it, v to another scope; the header's first next
step; text snapshots at 80x24 and 160x45."""

from __future__ import annotations

import pytest

from tests.conftest import DATA
from tests.model.test_stats_verdict import _trace
from tests.tui.helpers import ROOT, built, loaded, notes
from tests.tui.test_snapshots import check
from tui.widgets.advice_pane import AdvicePane
from tui.widgets.timeline import Timeline
from tui.widgets.trace_summary import TraceSummary


def _pane_text(app) -> str:
    pane = app.query_one(AdvicePane)
    parts = [
        pane.query_one("#advice-head"),
        pane.query_one("#advice"),
        pane.query_one("#advice-body"),
    ]
    lines = []
    for part in parts:
        lines += [part.render_line(y).text for y in range(part.size.height)]
    return "\n".join(line.rstrip() for line in lines) + "\n"


async def test_the_pane_lists_the_advice_and_enter_goes_to_its_evidence():
    async with loaded(DATA / "dataloader_bound.json", (120, 40)) as (pilot, app):
        await pilot.press("A")
        await built(app, pilot)
        pane = app.query_one(AdvicePane)
        text = _pane_text(app)
        assert "1. The GPU waits for the DataLoader  up to 70 us per step" in text
        assert "DataLoader calls cover 70 us of the GPU's 83 us idle time" in text
        assert "try: raise DataLoader(num_workers=...)" in text
        await pilot.press("enter")
        timeline = app.query_one(Timeline)
        assert "DataLoader" in app.trace.slice_name(timeline.selected)
        assert pane.found is not None and timeline.selected == pane.found[0].target.row
        await pilot.press("v")  # the view: the same window here, its own summary
        await built(app, pilot)
        assert "scope view" in str(pane.query_one("#advice-head").render())
        assert pane.found is not None
        await pilot.press("escape")
        assert not app.query(AdvicePane)


async def test_the_header_names_the_first_next_step():
    async with loaded(DATA / "dataloader_bound.json", (160, 45)) as (pilot, app):
        await built(app, pilot)
        head = str(app.query_one(TraceSummary).render())
        assert "next (A): data loading, up to 70 us/step" in head


async def test_a_trace_without_gpu_work_has_no_pane_and_says_why():
    async with loaded(DATA / "nested_cpu.json", (100, 30)) as (pilot, app):
        await pilot.press("A")
        await built(app, pilot)
        assert not app.query(AdvicePane)
        assert any("no GPU work in this trace" in n for n in notes(app))


async def test_a_busy_gpu_is_told_there_is_nothing_to_change(tmp_path):
    trace = _trace(tmp_path, kernels_us=4000, launch_us=10, gap_us=1)
    async with loaded(trace.path, (100, 30)) as (pilot, app):
        await pilot.press("A")
        await built(app, pilot)
        assert "none: no cause here could save 5% of the time" in _pane_text(app)
        await pilot.press("enter", "v", "enter")  # nothing listed: the keys do nothing wrong


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_snapshots_of_the_pane(size):
    async with loaded(DATA / "sync_bound.json", size) as (pilot, app):
        await pilot.press("A")
        await built(app, pilot)
        check(f"advice_pane_{size[0]}x{size[1]}", _pane_text(app))


async def test_at_80_columns_a_long_kernel_name_is_cut_and_its_lane_kept():
    """The H200 fp32 GEMM's kernel name runs to 110 characters."""
    path = ROOT / "sample_traces" / "matmul_4096_cuda.pt.trace.json.gz"
    async with loaded(path, (80, 24)) as (pilot, app):
        await pilot.press("A")
        await built(app, pilot)
        (line,) = [x for x in _pane_text(app).splitlines() if x.startswith("enter: ")]
        assert line.startswith("enter: sm80_xmma_gemm_f32f32_f32f32_f32")
        assert line.endswith("… on stream 7") and len(line) < 80
        await pilot.press("enter")
        assert "xmma" in app.trace.slice_name(app.query_one(Timeline).selected)
