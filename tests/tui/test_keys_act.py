"""Every key the footer and the help list acts, in each mode (one trace, a rank set, a pair) and
with each pane open; and the help lists exactly the keys that act there: a key bound anywhere
in the app that the help leaves out does nothing when pressed.

A key acts when the screen shows something else afterwards (what is drawn, a toast saying why
it cannot, another screen or mode, the focus moved). Each key is pressed from the same state,
restored between keys.
"""

from __future__ import annotations

import pytest
from textual import events

from tests.bench.make_rank_set import write_rank_set
from tests.conftest import DATA
from tests.model.test_diff import step_trace
from tests.tui.helpers import built, drawn, loaded
from tests.tui.test_key_fuzz import CHARS
from tui.app import TraceApp
from tui.screens.help import HelpScreen
from tui.screens.keys import acting, key_name
from tui.screens.ranks import RankScreen
from tui.screens.trace import TraceScreen
from tui.widgets.diff_pane import DiffPane
from tui.widgets.flame_view import FlameView
from tui.widgets.rank_view import RankView
from tui.widgets.stats_pane import StatsPane
from tui.widgets.stats_table import StatsTable
from tui.widgets.timeline import Timeline
from tui.widgets.tree_pane import TreePane

QUITTING = {"q", "ctrl+c", "ctrl+q"}
# Every key some binding of the app's own classes names: what the help might list.
CLASSES = [TraceApp, TraceScreen, Timeline, StatsPane, StatsTable, TreePane, FlameView]
CLASSES += [DiffPane, RankView]
BOUND = {k.strip() for c in CLASSES for b in c.BINDINGS for k in b.key.split(",")}  # type: ignore[union-attr]


def _listed(app) -> dict[str, bool]:
    """The keys the help and the footer list now, each with whether it is one of ours
    (declared by a class of tui/) rather than one a Textual widget brings."""
    in_help = {b.key for _, bindings in acting(app.screen) for b in bindings}
    return {
        key: _ours(active.node, active.binding)
        for key, active in app.screen.active_bindings.items()
        if active.enabled and (active.binding.show or key in in_help)
    }


def _ours(node, binding) -> bool:
    return any(
        binding.action == b.action and binding.key in [k.strip() for k in b.key.split(",")]
        for cls in type(node).__mro__
        if cls.__module__.startswith("tui.")
        for b in cls.__dict__.get("BINDINGS", [])
    )


def _seen(app) -> tuple[object, ...]:
    """What the user sees: the mode, the screen, the focus, everything drawn, and the toasts
    (a key that cannot act says why in one)."""
    toasts = tuple(n.identity for n in app._notifications)
    return (app.current_mode, app.screen, app.focused, drawn(app), toasts)


def _where(app) -> tuple[object, ...]:
    """The state keys are pressed from: the mode, the screen, the pane and the focus."""
    screen = app.screen
    pane = screen.open_pane if isinstance(screen, TraceScreen) else None
    rank = screen.rank if isinstance(screen, TraceScreen) else None
    focused = app.focused
    return (
        app.current_mode,
        type(screen),
        rank,
        pane,
        type(focused).__name__,
        focused and focused.id,
    )


async def _restore(pilot, app, where, open_state, start) -> None:
    """Back to the state the keys are pressed from, if a key left it."""
    mode, (screen, focused) = where[0], start
    if _where(app) == where:
        return
    if focused.is_attached and app.screen is screen:
        focused.focus()  # a key that moved the focus (tab)
        await pilot.pause()
        if _where(app) == where:
            return
    if app.current_mode != mode:
        await app.switch_mode(mode)
    while app.screen is not screen and (screen in app.screen_stack or app.screen.is_modal):
        await app.pop_screen()
    if isinstance(app.screen, TraceScreen):
        app.screen.action_close_search()
        app.screen.close_pane()
    await pilot.pause()
    await open_state(pilot, app)
    await built(app, pilot)
    assert _where(app) == where


async def _press(pilot, key: str) -> None:
    """One key, as the terminal sends it, then the app catches up (faster than Pilot's press,
    which waits for idle and animations after each key)."""
    event = events.Key(key, CHARS.get(key, key if len(key) == 1 else None))
    event.set_sender(pilot.app)
    pilot.app._driver.send_message(event)
    await pilot.pause()


async def _changes(pilot, app, key, where, open_state, start) -> bool:
    """Whether one press of `key` changes what the user sees, then back to where it was. Each
    verdict is judged on two presses: a worker or a toast's timer that lands during one press
    (the suite under load) changes the screen once, a key that acts does so on every press."""
    await app.workers.wait_for_complete()
    before = _seen(app)
    await _press(pilot, key)
    changed = _seen(app) != before
    await _restore(pilot, app, where, open_state, start)
    return changed


async def _nothing(pilot, app) -> None:
    return None


async def _check_every_key(pilot, app, open_state=_nothing, pane=None) -> list[str]:
    """Press every listed key: each of ours must act (Textual's own, such as a table's cursor
    keys, may meet an edge; they must not break anything). Press every other key the app binds
    somewhere: none may act. The help lists the same keys. Returns the listed keys.

    With `pane` TraceScreen, only the screen's own keys are pressed (another mode's keys: the
    rest are those of one trace). With a `pane` open (its class), the keys of the screen and
    the app are those the test without it pressed: only the pane's own are pressed, and of the
    unlisted only the timeline's (a pane's keys never leak to it, nor its keys to the pane)."""
    await open_state(pilot, app)
    await built(app, pilot)
    where, start = _where(app), (app.screen, app.focused)
    listed = _listed(app)
    await pilot.press("question_mark")
    assert isinstance(app.screen, HelpScreen)
    help_rows = {k for keys, _ in app.screen.rows for k in keys.split()}
    await pilot.press("escape")
    await _restore(pilot, app, where, open_state, start)
    # The help names every key listed (a run of digits as one row: 1-9).
    named = {key_name(k) for k in listed}
    spans = {r for r in help_rows if "-" in r and r[0].isdigit()}
    digits = {str(d) for r in spans for d in range(int(r[0]), int(r[-1]) + 1)}
    assert named == (help_rows - spans) | (digits & named), (named, help_rows)
    dead, quiet = [], []
    pressed, unlisted = set(listed), BOUND - set(listed)
    if pane is TraceScreen:  # the mode's own keys: the screen's (the rest as on one trace)
        nodes = app.screen.active_bindings
        pressed = {k for k in listed if nodes[k].node is app.screen}
        unlisted = {k.strip() for b in TraceScreen.BINDINGS for k in b.key.split(",")} - pressed
    elif pane is not None:
        nodes = app.screen.active_bindings
        pressed = {k for k in listed if _inside(nodes[k].node, pane)}
        unlisted = {k.strip() for b in Timeline.BINDINGS for k in b.key.split(",")} - set(listed)
    for key in sorted(pressed - QUITTING):
        state = (pilot, app, key, where, open_state, start)
        if listed[key] and not await _changes(*state) and not await _changes(*state):
            dead.append(key)
    for key in sorted(unlisted - QUITTING):
        state = (pilot, app, key, where, open_state, start)
        if await _changes(*state) and await _changes(*state):
            quiet.append(key)
    assert not dead, f"listed but did nothing: {dead}"
    assert not quiet, f"acted but the help and the footer do not list it: {quiet}"
    assert set(listed) & QUITTING, "no way to quit listed"
    return sorted(listed)


def _inside(node, pane) -> bool:
    return any(isinstance(n, pane) for n in node.ancestors_with_self)


async def _stats(pilot, app) -> None:
    await pilot.press("t")
    await built(app, pilot)
    assert app.focused is app.query_one(StatsTable)
    await pilot.press("down")  # off the first row: home and up have somewhere to go


async def _tree(pilot, app) -> None:
    await pilot.press("T")
    await built(app, pilot)
    assert app.focused is app.query_one("#calls")


async def _flame(pilot, app) -> None:
    await _tree(pilot, app)
    await pilot.press("f")
    await built(app, pilot)
    assert isinstance(app.focused, FlameView)


async def _diff(pilot, app) -> None:
    await pilot.press("D")
    await pilot.pause()
    assert app.focused is app.query_one(DiffPane).query_one("#diff")


PANE_OF = {_stats: StatsPane, _tree: TreePane, _flame: TreePane, _diff: DiffPane}


@pytest.mark.parametrize(
    "state",
    [_nothing, _stats, _tree, _flame],
    ids=["timeline", "stats", "tree", "flame"],
)
async def test_one_trace_every_listed_key_acts(state):
    async with loaded(DATA / "with_stack.json", (80, 24)) as (pilot, app):
        keys = await _check_every_key(pilot, app, state, PANE_OF.get(state))
        assert {"o", "D", "b"}.isdisjoint(keys)  # a pair's and a rank set's keys: not here


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranks")
    write_rank_set(folder, ranks=3, steps=2, slow_rank=1, slow_step=1)
    return folder


async def test_a_rank_set_every_listed_key_acts(ranks):
    async with loaded(ranks, (80, 24)) as (pilot, app):
        assert isinstance(app.screen, RankScreen)
        keys = await _check_every_key(pilot, app)
        assert "enter" in keys and not {"t", "T", "/", "o", "D"} & set(keys)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, TraceScreen) and app.rank == 0
        keys = await _check_every_key(pilot, app, _rank_0, TraceScreen)
        assert {"b", "less_than_sign", "greater_than_sign"} <= set(keys)


async def _rank_0(pilot, app) -> None:
    """Rank 0's timeline (`<`, `>` and `b` left it)."""
    if isinstance(app.screen, TraceScreen) and app.rank != 0:
        await app.pop_screen()
    if isinstance(app.screen, RankScreen):
        app.screen.view.query_one("#ranks").move_cursor(row=0)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert app.rank == 0


@pytest.fixture
def pair(tmp_path):
    step_trace(tmp_path / "base.json", [("k_softmax", 10.0), ("k_mul", 10.0)])
    step_trace(tmp_path / "new.json", [("triton_fused", 12.0)], steps=3, step_us=130.0)
    return tmp_path / "base.json", tmp_path / "new.json"


@pytest.mark.parametrize("state", [_nothing, _diff], ids=["timeline", "diff"])
async def test_a_pair_every_listed_key_acts(pair, state):
    async with loaded(pair[0], (80, 24), new=pair[1]) as (pilot, app):
        assert app.changes is not None
        keys = await _check_every_key(pilot, app, state, PANE_OF.get(state, TraceScreen))
        assert "o" in keys and ("D" in keys or state is _diff)
