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
    """Where the keys left the app: the mode, the screen, the pane open, the focus (its class
    and id), and for the stats pane whether it shows kernels and ops by input shape."""
    screen = app.screen
    pane = getattr(screen, "_pane", None)
    focused = app.focused and f"{type(app.focused).__name__}#{app.focused.id}"
    return (
        app.current_mode,
        type(screen).__name__,
        getattr(screen, "open_pane", None),
        focused,
        getattr(pane, "kernels", None),
        getattr(pane, "by_shape", None),
    )


async def _after(path, keys: list[str], burst: bool = True, new=None) -> tuple[object, ...]:
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


# Each burst with where the same keys typed slowly leave the app (written down, not typed
# slowly again by each test: `test_typed_slowly_the_keys_end_where_written` checks the table).
TRACE = ("_default", "TraceScreen")
TIMELINE = (*TRACE, None, "Timeline#None", None, None)
STATS = (*TRACE, "stats", "StatsTable#stats")
FLAME = (*TRACE, "tree", "FlameView#flame", None, None)
DETAILS = (*TRACE, None, "VerticalScroll#details", None, None)
ONE_TRACE = [
    (["t", "x"], (*STATS, True, False)),
    (["t", "x", "S"], (*STATS, False, True)),
    (["t", "escape"], TIMELINE),
    (["T", "f"], FLAME),
    (["A", "escape"], TIMELINE),
    # escape's request to close the stats pane is read after T opened the tree: not the
    # tree's to close
    (["t", "escape", "T", "f"], FLAME),
    (["T", "q", "t", "x"], (*STATS, True, False)),
    (["t", "slash", "escape"], (*STATS, False, False)),  # out of the filter: the pane stays
    (["T", "f", "slash", "escape"], FLAME),
    # a tab read before the pane had closed tabbed inside it; one read before the tree had
    # built lost the focus it gave to the tree once built
    (["t", "escape", "tab"], DETAILS),
    (["T", "escape", "tab"], DETAILS),
    (["T", "tab"], (*TRACE, "tree", "Timeline#None", None, None)),
    (["T", "f", "tab"], (*TRACE, "tree", "Timeline#None", None, None)),
]
PAIR = [
    (["o", "t"], ("NEW", "TraceScreen", "stats", "StatsTable#stats", False, False)),
    (["D", "o", "t"], ("NEW", "TraceScreen", "stats", "StatsTable#stats", False, False)),
    (["D", "o", "o"], ("BASE", "TraceScreen", "diff", "ColumnTable#diff", None, None)),
]


def _ids(case) -> str:
    return " ".join(case[0])


@pytest.fixture
def pair(tmp_path):
    step_trace(tmp_path / "base.json", [("k_softmax", 10.0), ("k_mul", 10.0)])
    step_trace(tmp_path / "new.json", [("triton_fused", 12.0)], steps=3, step_us=130.0)
    return tmp_path / "base.json", tmp_path / "new.json"


@pytest.mark.parametrize("case", ONE_TRACE, ids=_ids)
async def test_a_burst_after_a_pane_opens_acts_as_slow_keys(case):
    keys, slow = case
    assert await _after(DATA / "gpu_streams.json", keys) == slow


@pytest.mark.parametrize("case", PAIR, ids=_ids)
async def test_a_burst_after_o_acts_on_the_trace_it_shows(pair, case):
    keys, slow = case
    assert await _after(pair[0], keys, new=pair[1]) == slow


@pytest.mark.parametrize("which", ["one trace", "pair"])
async def test_typed_slowly_the_keys_end_where_written(pair, which):
    """The table above, typed slowly: the first case of each end it names, so that the table
    cannot drift from what slow keys do."""
    table = ONE_TRACE if which == "one trace" else PAIR
    firsts = {end: keys for keys, end in reversed(table)}
    for slow, keys in firsts.items():
        if which == "one trace":
            got = await _after(DATA / "gpu_streams.json", keys, burst=False)
        else:
            got = await _after(pair[0], keys, burst=False, new=pair[1])
        assert got == slow, keys


async def test_two_fast_tabs_on_the_rank_table_reach_the_third_table(tmp_path):
    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1, slow_step=1)
    state = await _after(tmp_path, ["tab", "tab"])
    assert state[3].endswith("#collectives")


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
