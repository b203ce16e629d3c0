"""Keys typed in one burst, right after the key that opens or closes a pane or moves the focus,
act as the same keys typed slowly: they reach the pane, not the timeline behind it, and a pane
asked to close does not take the next one with it (a user's `t x`, `A enter`, `T f`, `t escape
T f`, and `tab tab` on the rank table)."""

from __future__ import annotations

import pytest

from tests.bench.make_rank_set import write_rank_set
from tests.conftest import DATA
from tests.model.test_diff import step_trace
from tests.tui.helpers import loaded, notes
from tests.tui.test_key_fuzz import _play


def _state(app) -> tuple[object, ...]:
    screen = app.screen
    pane = getattr(screen, "_pane", None)
    return (
        app.current_mode,
        type(screen).__name__,
        getattr(screen, "open_pane", None),
        type(app.focused).__name__,
        app.focused and app.focused.id,
        getattr(pane, "kernels", None),
        getattr(pane, "by_shape", None),
    )


async def _after(path, keys: list[str], burst: bool, new=None) -> tuple[object, ...]:
    async with loaded(path, (100, 30), new=new) as (pilot, app):
        if burst:
            await _play(pilot, keys)
        else:
            for key in keys:
                await pilot.press(key)
                await app.workers.wait_for_complete()
                await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        return _state(app)


@pytest.mark.parametrize(
    "keys",
    [
        ["t", "x"],
        ["t", "x", "S"],
        ["t", "escape"],
        ["T", "f"],
        ["A", "escape"],
        # escape's request to close the stats pane is read after T opened the tree: not the
        # tree's to close
        ["t", "escape", "T", "f"],
        ["T", "q", "t", "x"],
        ["t", "slash", "escape"],  # out of the filter, back to the table: the pane stays
        ["T", "f", "slash", "escape"],
        # a tab read before the pane had closed tabbed inside it; one read before the tree
        # had built lost the focus it gave to the tree once built
        ["t", "escape", "tab"],
        ["T", "escape", "tab"],
        ["T", "tab"],
        ["T", "f", "tab"],
    ],
    ids=" ".join,
)
async def test_a_burst_after_a_pane_opens_acts_as_slow_keys(keys):
    path = DATA / "gpu_streams.json"
    slow = await _after(path, keys, burst=False)
    assert await _after(path, keys, burst=True) == slow


@pytest.mark.parametrize("keys", [["o", "t"], ["D", "o", "t"], ["D", "o", "o"]], ids=" ".join)
async def test_a_burst_after_o_acts_on_the_trace_it_shows(tmp_path, keys):
    step_trace(tmp_path / "base.json", [("k_softmax", 10.0), ("k_mul", 10.0)])
    step_trace(tmp_path / "new.json", [("triton_fused", 12.0)], steps=3, step_us=130.0)
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    slow = await _after(base, keys, burst=False, new=new)
    assert await _after(base, keys, burst=True, new=new) == slow


async def test_two_fast_tabs_on_the_rank_table_reach_the_third_table(tmp_path):
    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1, slow_step=1)
    state = await _after(tmp_path, ["tab", "tab"], burst=True)
    assert state[4] == "collectives"


async def test_a_pane_key_typed_after_q_shows_no_error_as_the_app_quits():
    async with loaded(DATA / "gpu_streams.json", (100, 30)) as (pilot, app):
        await _play(pilot, ["q", "k", "t", "tab", "D"])
        assert not app.shown_errors  # loaded() checks again on the way out


@pytest.mark.parametrize(
    ("keys", "box"),
    [
        (["slash", "s", "t", "a", "t", "s"], "search"),  # `t` is typed, not the stats pane
        (["t", "slash", "a", "d", "d"], "filter"),
        (["T", "f", "slash", "a", "d", "d"], "flame-search"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
async def test_text_typed_in_a_burst_lands_in_the_box_its_first_key_opened(keys, box):
    async with loaded(DATA / "gpu_streams.json", (100, 30)) as (pilot, app):
        await _play(pilot, keys)
        await app.workers.wait_for_complete()
        await pilot.pause()
        typed = "".join(k for k in keys[keys.index("slash") + 1 :])
        assert app.focused.id == box and app.focused.value == typed
        assert app.screen.open_pane == {"search": None, "filter": "stats"}.get(box, "tree")


@pytest.mark.parametrize("pane", ["T", "A", "t"])
async def test_closing_the_search_gives_the_focus_back_to_the_pane(pane):
    async with loaded(DATA / "gpu_streams.json", (100, 30)) as (pilot, app):
        await pilot.press(pane)
        await app.workers.wait_for_complete()
        await pilot.pause()
        before = app.focused
        await pilot.press("escape" if pane == "t" else "slash", "escape")
        await pilot.pause()
        assert app.focused is (app.query_one("Timeline") if pane == "t" else before)


async def test_an_enter_typed_in_the_burst_submits_the_text_before_it():
    """`/add⏎` at paste speed: the enter reached the box before the letters (which come back up
    through the app) and searched for ''."""
    async with loaded(DATA / "gpu_streams.json", (100, 30)) as (pilot, app):
        await _play(pilot, ["slash", "a", "d", "d", "enter"])
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert notes(app)[-1] == "match 1 of 2 for 'add' (n, N: next, previous)"
        assert app.trace.slice_name(app.screen.timeline.selection.slice).startswith("aten::add")


async def test_keys_typed_while_a_rank_loads_act_as_typed_slowly(tmp_path, monkeypatch):
    """An enter typed in a burst after the one that opens a rank reached the rank table behind
    its load screen and opened a rank again: once a load screen left under the rank's timeline,
    where `b` stopped for good; with the `down` between them, the rank below instead."""
    import time

    from tui.screens import loading

    real = loading.load_trace
    loads: list[str] = []

    def slow(path, progress, cache, workers):  # the keys arrive while the rank loads
        loads.append(path)
        time.sleep(0.2)
        return real(path, progress=progress, cache=cache, workers=workers)

    monkeypatch.setattr(loading, "load_trace", slow)
    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1, slow_step=1)

    async def after(burst: bool) -> tuple[object, ...]:
        loads.clear()
        async with loaded(tmp_path, (100, 30)) as (pilot, app):
            if burst:
                await _play(pilot, ["enter", "down", "enter"])
            else:
                await pilot.press("enter", "down", "enter")
            for _ in range(100):  # until both enters are done with: no load left running
                await app.workers.wait_for_complete()
                await pilot.pause()
                if type(app.screen).__name__ == "TraceScreen" and not app.workers:
                    break
            opened = ([type(s).__name__ for s in app.screen_stack], app.rank, len(loads))
            await pilot.press("b")
            return (*opened, type(app.screen).__name__)

    slow_keys = await after(burst=False)
    assert slow_keys == (["Screen", "RankScreen", "TraceScreen"], 0, 1, "RankScreen")
    assert await after(burst=True) == slow_keys
