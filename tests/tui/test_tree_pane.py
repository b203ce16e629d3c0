"""The call tree pane's flame view: the icicle's layout by weight, the keys (f, arrows, enter,
backspace, /), and text snapshots of the tree and the flame view at 80x24 and 160x45."""

from __future__ import annotations

import pytest

from tests.model.test_call_tree import trace  # noqa: F401 (the hand-made nested trace)
from tests.tui.helpers import built, loaded
from tests.tui.test_snapshots import check
from tui.model.analysis.call_tree import call_tree
from tui.model.present.icicle import icicle
from tui.widgets.flame_view import FlameView, short_name
from tui.widgets.tree_pane import TreePane


def test_the_icicle_gives_each_frame_its_share_of_the_width(trace):  # noqa: F811
    tree = call_tree(trace, weight="cpu")
    rows = icicle(tree, 0, 10, 180)
    assert [(s.x0, s.x1) for s in rows[0]] == [(0, 180)]  # the root: 1.8 ms
    assert [(s.x0, s.x1, tree.label(s.node)) for s in rows[1]] == [(0, 180, "ProfilerStep*")]
    # Under the module: Linear's three calls (600 us) and relu's two (100 us), by weight.
    assert [(s.x0, s.x1, tree.label(s.node)) for s in rows[4]] == [
        (0, 60, "nn.Module: Linear"),
        (60, 70, "aten::relu"),
    ]
    assert icicle(tree, 0, 10, 0) == [] and len(icicle(tree, 0, 3, 180)) == 3
    assert short_name("nn.Module: Linear") == "Linear"
    assert short_name("train.py(10): step") == "step" and short_name("aten::mm") == "aten::mm"


def _pane_text(app) -> str:
    pane = app.query_one(TreePane)
    lines = [str(pane.query_one("#tree-head").render())]
    if pane.has_class("flame"):
        flame = pane.query_one(FlameView)
        lines += [flame.render_line(y).text for y in range(flame.size.height)]
    else:
        tree = pane.query_one("#calls")
        lines += [tree.render_line(y).text for y in range(tree.size.height)]
    return "\n".join(line.rstrip() for line in "\n".join(lines).splitlines()) + "\n"


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_snapshots_of_the_tree_and_the_flame_view(trace, size):  # noqa: F811
    async with loaded(trace.path, size) as (pilot, app):
        await pilot.press("T")
        await built(app, pilot)
        check(f"tree_pane_{size[0]}x{size[1]}", _pane_text(app))
        await pilot.press("f")
        await built(app, pilot)
        check(f"flame_view_{size[0]}x{size[1]}", _pane_text(app))


async def test_flame_keys_move_zoom_and_highlight(trace):  # noqa: F811
    async with loaded(trace.path, (120, 40)) as (pilot, app):
        await pilot.press("T", "x", "f")  # by CPU time
        await built(app, pilot)
        pane = app.query_one(TreePane)
        flame = pane.query_one(FlameView)
        assert app.focused is flame and flame.calls.weight == "cpu"
        assert "(all): 1.8 ms (100.0% of the view)" in str(pane.query_one("#tree-head").render())
        await pilot.press("down", "down", "down", "down")
        assert flame.calls.label(flame.node) == "nn.Module: Linear"
        await pilot.press("right")
        assert flame.calls.label(flame.node) == "aten::relu"
        await pilot.press("enter")  # zoomed in: relu is the root row, across the width
        assert flame.roots[-1] == flame.node
        assert flame.layout_rows()[0][0].x1 == flame.size.width
        await pilot.press("backspace")
        assert flame.roots == [0] and flame.calls.label(flame.node) == "aten::relu"
        await pilot.press("slash", *"linear", "enter")
        assert flame.matches() == 1 and "1 frame holds “linear”" in str(
            pane.query_one("#tree-head").render()
        )
        await pilot.press("escape")  # the highlight goes first, the pane stays
        assert flame.search == "" and app.query(TreePane)
        await pilot.press("up", "up", "up", "up")  # relu, Net, step, ProfilerStep*, the root
        assert flame.node == 0
        await pilot.press("u", "u")  # the modules view, in the flame: its own root in the head
        await built(app, pilot)
        assert "(all): 1.4 ms (100.0% of the view)" in str(pane.query_one("#tree-head").render())
        await pilot.press("f")  # back to the tree
        await built(app, pilot)
        assert not pane.has_class("flame") and app.focused is pane.query_one("#calls")


async def test_a_build_landing_on_a_pane_being_taken_apart_is_dropped(trace):  # noqa: F811
    """Seen once in a burst of keys (`S S u T e Tab f w`): the build came back while the pane
    was being removed, its head already gone: NoMatches on the error screen."""
    async with loaded(trace.path, (120, 40)) as (pilot, app):
        await pilot.press("T")
        await built(app, pilot)
        pane = app.query_one(TreePane)
        calls = pane.calls
        await pane.query_one("#tree-head").remove()  # the first part taken away
        pane._built(pane.generation, calls)
        await pilot.pause()
        assert not app.shown_errors
