"""The key fuzzer's systematic half: every key the app binds, pressed in every mode (one trace,
a rank set, a pair), in every pane and each of its sub-modes, sent in the same burst as the keys
that open that state, so that it arrives while the pane's worker is still computing (the way a
fast typist hits it, and where the crashes hid that random sequences missed).

Each state's keys are shuffled (seeded) and cut into bursts of a few keys; a burst is the
state's opening keys, then those keys, with no wait between them. After each burst no error
screen may have appeared, then the app is put back where the state starts from.

Every key in every state is about 600 bursts (a few minutes): `TRACE_TUI_FUZZ_FULL=1` runs
them all, on both traces. By default each state gets two bursts on one of the two traces;
`TRACE_TUI_FUZZ_SEED` picks the keys and the trace.
"""

from __future__ import annotations

import os
import random

import pytest

from tests.bench.gen_trace import generate
from tests.bench.make_rank_set import write_rank_set
from tests.model.test_diff import step_trace
from tests.tui.helpers import loaded
from tests.tui.test_key_fuzz import KEYS, SEED, _play, close_overlays
from tui.commands.trace_args import SAMPLES
from tui.screens.ranks import RankScreen
from tui.screens.trace import TraceScreen

BURST = 8  # keys of a state pressed in one burst after the keys that open it
FULL = os.environ.get("TRACE_TUI_FUZZ_FULL") == "1"
BURSTS = 2  # a state's bursts unless FULL
# The states of one trace, each as the keys that open it from the bare timeline.
TRACE_STATES = {
    "timeline": [],
    "search": ["slash"],
    "help": ["question_mark"],
    "health": ["H"],
    "ops": ["t"],
    "ops filter": ["t", "slash"],
    "kernels": ["t", "x"],
    "by shape": ["t", "S"],
    "kernels by shape": ["t", "x", "S"],
    "next scope": ["t", "v"],
    "tree": ["T"],
    "tree by GPU": ["T", "x"],
    "bottom-up": ["T", "u"],
    "modules": ["T", "u", "u"],
    "tree search": ["T", "slash"],
    "flame": ["T", "f"],
}
RANK_STATES = {
    "rank table": [],
    "other table": ["tab"],
    "a rank": ["enter"],
    "a rank's ops": ["enter", "t"],
    "a rank's tree": ["enter", "T"],
    "next rank": ["enter", "greater_than_sign"],
}
PAIR_STATES = {
    "diff ops": ["D"],
    "diff next table": ["D", "x"],
    "diff third table": ["D", "x", "x"],
    "diff filter": ["D", "slash"],
    "other trace": ["o"],
    "other trace's ops": ["o", "t"],
}


def _bursts(state: str, opening: list[str]) -> list[list[str]]:
    keys = list(KEYS)
    random.Random(f"{SEED} {state}").shuffle(keys)
    bursts = [opening + keys[k : k + BURST] for k in range(0, len(keys), BURST)]
    return bursts if FULL else bursts[:BURSTS]


async def _reset(pilot, app, mode: str, screen) -> None:
    """Back to the bare start of the mode: the first mode, its first screen, no overlay, no
    pane, no search."""
    await close_overlays(pilot, app)
    if app.current_mode != mode:
        await app.switch_mode(mode)
    while app.screen is not screen and screen in app.screen_stack:
        app.pop_screen()
        await pilot.pause()
    assert app.screen is screen, f"on {app.screen}"
    if isinstance(screen, TraceScreen):
        screen.action_close_search()
        screen.close_pane()
        screen.timeline.focus()
    else:
        assert isinstance(screen, RankScreen)
        screen.view.query_one("#ranks").focus()
    await pilot.pause()


async def _cover(path, states: dict[str, list[str]], new=None) -> None:
    async with loaded(path, (120, 40), new=new) as (pilot, app):
        mode, screen = app.current_mode, app.screen
        for state, opening in states.items():
            for keys in _bursts(state, opening):
                await _play(pilot, keys)
                assert not app.shown_errors, f"{state}: {keys}: {app.shown_errors}"
                await _reset(pilot, app, mode, screen)


def _one_trace(tmp_path, which: str):
    if which == "generated":
        path = tmp_path / "generated.json"
        with path.open("w") as out:
            generate(3000, out)
        return path
    return SAMPLES / "h100_bert_small.json.gz"  # the bundled real one: here without ../shared


def _states_of(trace: int) -> dict[str, list[str]]:
    """The one-trace states opened on trace 0 or 1: all of them in a full run; else every other
    one, the seed's parity choosing which half, so that a run covers every state once and an
    odd seed after an even one covers each on both traces."""
    states = list(TRACE_STATES.items())
    return dict(states) if FULL else dict(states[(trace + SEED) % 2 :: 2])


@pytest.mark.parametrize("which", ["generated", "h100_bert_small"])
async def test_every_key_in_every_state_of_one_trace(tmp_path, which):
    await _cover(_one_trace(tmp_path, which), _states_of(int(which == "h100_bert_small")))


async def test_every_key_in_every_state_of_a_rank_set(tmp_path):
    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1, slow_step=1)
    await _cover(tmp_path, RANK_STATES)


async def test_every_key_in_every_state_of_a_pair(tmp_path):
    step_trace(tmp_path / "base.json", [("k_softmax", 10.0), ("k_mul", 10.0)])
    step_trace(tmp_path / "new.json", [("triton_fused", 12.0)], steps=3, step_us=130.0)
    await _cover(tmp_path / "base.json", PAIR_STATES, new=tmp_path / "new.json")
