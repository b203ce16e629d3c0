"""The LaneCanvas alone: it draws a Scene and a View it is given, with no Timeline to drive it,
and a repeated render of a line is a hit in its strip cache.

gpu_streams.json (see test_timeline.py): stream 7 (pinned, the first row) runs
gemm_kernel [20, 32) us; the trace spans 92 us.
"""

from __future__ import annotations

from textual.app import App, ComposeResult

from tests.conftest import DATA
from tui.model.ingest import load_trace
from tui.model.present.kinds import KINDS
from tui.widgets.lane_canvas import FIXED, LaneCanvas
from tui.widgets.timeline import Timeline
from tui.widgets.timeline_scene import Scene
from tui.widgets.timeline_view import View

SPAN = 92_000


class CanvasApp(App[None]):
    """An app holding only a canvas."""

    def __init__(self, canvas: LaneCanvas) -> None:
        super().__init__()
        self.canvas = canvas

    def compose(self) -> ComposeResult:
        yield self.canvas


def gemm(scene: Scene) -> int:
    trace = scene.trace
    return next(r for r in range(len(trace.slices)) if trace.slice_name(r).startswith("gemm"))


async def test_the_canvas_draws_the_view_it_is_given_with_no_timeline():
    scene = Scene(load_trace(DATA / "gpu_streams.json"))
    kernel = gemm(scene)
    canvas = LaneCanvas(scene, View((0, SPAN), cursor=3))
    app = CanvasApp(canvas)
    async with app.run_test(size=(100, 12)) as pilot:
        await pilot.pause()
        assert not app.query(Timeline)
        top = canvas.render_line(0)
        assert "stream 7" in top.text[: canvas.gutter_width] and "gemm" in top.text
        assert not any(seg.style and seg.style.reverse for seg in top if "gemm" in seg.text)
        # Told to select the kernel and to zoom on it: drawn so, with nothing else driving it.
        canvas.show(View((16_000, 36_000), cursor=0, selected=kernel))
        await pilot.pause()
        zoomed = canvas.render_line(0)
        assert zoomed.text != top.text and canvas.time_at(0) >= 16_000
        cells = zoomed.text[canvas.gutter_width :]
        assert cells.strip().startswith("gemm_kernel<float, 128>")  # wide enough for its name
        assert any(seg.style and seg.style.reverse for seg in zoomed if "gemm" in seg.text)


async def test_a_repeated_render_is_a_strip_cache_hit():
    scene = Scene(load_trace(DATA / "gpu_streams.json"))
    canvas = LaneCanvas(scene, View((0, SPAN)))
    async with CanvasApp(canvas).run_test(size=(100, 12)) as pilot:
        await pilot.pause()
        lines = [canvas.render_line(y) for y in range(canvas.size.height)]
        kept = canvas.cached
        again = [canvas.render_line(y) for y in range(canvas.size.height)]
        assert all(a is b for a, b in zip(lines, again, strict=True))  # not painted again
        assert canvas.cached == kept
        # The cursor moves: only the rows it left and reached are painted again.
        canvas.show(View((0, SPAN), cursor=3))
        moved = [canvas.render_line(y) for y in range(canvas.size.height)]
        repainted = [y for y, (a, b) in enumerate(zip(lines, moved, strict=True)) if a is not b]
        assert repainted == [0, 3]
        # A new window makes every row stale.
        canvas.show(View((0, SPAN // 2), cursor=3))
        zoomed = [canvas.render_line(y) for y in range(len(scene.rows))]
        assert not any(a is b for a, b in zip(moved, zoomed, strict=False))


def test_every_kind_has_a_fixed_style():
    """The bars' colours are FIXED by kind (not component classes): a kind added without one
    would fail to paint its rows."""
    assert set(KINDS) <= FIXED.keys()
