"""A key fuzzer: random sequences over every binding of every screen and pane, typing into the
inputs and resizing between 80x24 and 250x60, on hand-made and real traces, a rank set and a
BASE/NEW pair.

A sequence passes when no error screen appeared; every few sequences, and at the end, the app
must still answer (the timeline is there and takes keys once overlays are closed); the trace
file must be untouched. The sequences come
from a seeded generator, so a failure names its seed and keys and replays exactly; each one
found is kept in REGRESSIONS. `TRACE_TUI_FUZZ=N` runs N sequences per trace instead of the
few CI runs, `TRACE_TUI_FUZZ_SEED=K` other ones.
"""

from __future__ import annotations

import hashlib
import os
import random

import pytest
from textual import events

from tests.bench.make_rank_set import write_rank_set
from tests.conftest import DATA, SHARED
from tests.deep_stack import write_deep_stack
from tests.model.test_diff import step_trace
from tests.tui.helpers import loaded
from tui.app import TraceApp
from tui.commands.trace_args import SAMPLES
from tui.screens.health import HealthScreen
from tui.screens.help import HelpScreen
from tui.screens.loading import LoadScreen
from tui.screens.ranks import RankScreen
from tui.screens.trace import TraceScreen
from tui.widgets.diff_pane import DiffPane
from tui.widgets.flame_view import FlameView
from tui.widgets.rank_view import RankView
from tui.widgets.stats_pane import StatsPane
from tui.widgets.stats_table import StatsTable
from tui.widgets.timeline import Timeline
from tui.widgets.tree_pane import TreePane

SEQUENCES = int(os.environ.get("TRACE_TUI_FUZZ", "6"))  # per trace; CI may ask for more
SEED = int(os.environ.get("TRACE_TUI_FUZZ_SEED", "0"))  # another seed, other sequences
LENGTH = 6
CHECK_EVERY = 8  # sequences between checks that the app still answers (they take keys too)
SIZES = [(80, 24), (120, 40), (250, 60)]
QUITTING = {"q", "ctrl+c"}
# Keys a user reaches for that no binding lists: focus, paging, the help and typing.
EXTRA = ["tab", "shift+tab", "pageup", "pagedown", "home", "end", "escape", "enter", "a", "z"]
# Key sequences the fuzzer once found failing, replayed on two traces (REPLAYED_ON).
REGRESSIONS: list[list[str]] = [
    # The pane closed while the timeline's window message was still on its way to it, and
    # before the table it was to focus existed.
    ["t", "t"],
    ["t", "x", "t", "t"],  # the pane left with kernels, then opened and closed at once
    ["t", "s", "t", "left_square_bracket", "resize:1", "backspace", "J", "slash", "S", "t"],
    ["t", "pagedown", "s", "v", "resize:2", "J", "c", "slash", "S", "t", "e", "p", "enter"],
    # A filter matching nothing, its text read as markup in the message saying so.
    ["t", "resize:1", "slash", "resize:1", "left_square_bracket", "slash"],
]


def _keys() -> list[str]:
    bindings = [
        *Timeline.BINDINGS,
        *StatsPane.BINDINGS,
        *StatsTable.BINDINGS,
        *TraceApp.BINDINGS,
        *TraceScreen.BINDINGS,
        *HelpScreen.BINDINGS,
        *HealthScreen.BINDINGS,
        *TreePane.BINDINGS,
        *FlameView.BINDINGS,
        *DiffPane.BINDINGS,
        *RankView.BINDINGS,
    ]
    keys = {k.strip() for b in bindings for k in b.key.split(",")}  # type: ignore[union-attr]
    return sorted((keys - QUITTING) | set(EXTRA))


KEYS = _keys()


def _sequence(rng: random.Random) -> list[str]:
    out: list[str] = []
    for _ in range(LENGTH):
        pick = rng.random()
        if pick < 0.08:
            out.append(f"resize:{rng.randrange(len(SIZES))}")
        elif pick < 0.14:  # a search: open, type, submit
            out += ["slash", *rng.choice(["aten", "kernel", "zz", "Step", "g", "[/"]), "enter"]
        else:
            out.append(rng.choice(KEYS))
    return out


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# The character a key types, for the inputs (letters and digits type themselves).
CHARS = {
    "slash": "/",
    "question_mark": "?",
    "full_stop": ".",
    "comma": ",",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "right_parenthesis": ")",
}


async def _play(pilot, keys: list[str]) -> None:
    """The keys as a fast typist sends them: one burst, then the app catches up (Pilot's
    `press` waits for the app to go idle after every key, 40 ms or more each)."""
    for key in keys:
        if key.startswith("resize:"):
            await pilot.pause()
            await pilot.resize_terminal(*SIZES[int(key.split(":")[1])])
            continue
        char = CHARS.get(key, key if len(key) == 1 else None)
        event = events.Key(key, char)
        event.set_sender(pilot.app)
        pilot.app._driver.send_message(event)
    await pilot.pause()


async def close_overlays(pilot, app) -> None:
    """Wait out a rank a sequence opened (still loading), then close the help and health."""
    for _ in range(200):
        if not isinstance(app.screen, LoadScreen):
            break
        await pilot.pause(0.02)
    while isinstance(app.screen, HelpScreen | HealthScreen):
        await pilot.press("escape")


async def _still_answers(pilot, app) -> None:
    """Close what a sequence opened (help, search, the pane), then the timeline takes keys (on
    the rank table: the table does)."""
    await close_overlays(pilot, app)
    if isinstance(app.screen, RankScreen):
        table = app.screen.view.query_one("#ranks")
        table.focus()
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1, f"focus: {app.focused}"
        return
    screen = app.screen
    assert isinstance(screen, TraceScreen), f"on {screen}"
    screen.action_close_search()
    screen.close_pane()
    timeline = screen.timeline
    timeline.focus()
    await pilot.press("w", "right_parenthesis")
    assert timeline.window == (0, max(timeline.trace.span_ns, 1)), f"focus: {app.focused}"


def _traces(tmp_path):
    out = [DATA / "gpu_streams.json", DATA / "memory_sync.json", DATA / "with_stack.json"]
    out.append(write_deep_stack(tmp_path / "deep_stack.json"))
    out.append(SAMPLES / "h100_bert_small.json.gz")
    nccl = SHARED / "hta/a100_nccl_2rank_rank0.json.gz"
    return [*out, nccl] if nccl.exists() else out


# The traces the REGRESSIONS are replayed on (a hand-made one and a real one): the races they
# caught are the panes', the same on any trace with GPU work.
REPLAYED_ON = {"gpu_streams.json", "h100_bert_small.json.gz"}


@pytest.mark.parametrize("which", range(6))
async def test_random_key_sequences_never_break_the_app(tmp_path, which):
    traces = _traces(tmp_path)
    if which >= len(traces):
        pytest.skip(f"../shared/traces is not here: trace {which} of the fuzzer's is missing")
    path = traces[which]
    digest = _digest(path)
    seed = SEED * 1000 + which
    rng = random.Random(seed)
    sequences = [_sequence(rng) for _ in range(SEQUENCES)]
    async with loaded(path, (120, 40)) as (pilot, app):
        for n, keys in enumerate(
            [*REGRESSIONS, *sequences] if path.name in REPLAYED_ON else sequences
        ):
            await _play(pilot, keys)
            assert not app.shown_errors, (
                f"{path.name}: sequence {n} (seed {seed}) {keys}: {app.shown_errors}"
            )
            if n % CHECK_EVERY == CHECK_EVERY - 1:
                await _still_answers(pilot, app)
        await _still_answers(pilot, app)
    assert _digest(path) == digest


@pytest.mark.parametrize("mode", ["ranks", "pair"])
async def test_random_key_sequences_in_a_rank_set_and_a_pair(tmp_path, mode):
    """The same over the other two modes: `enter`, `b`, `<`, `>` on a rank set; `o` and `D` on a
    pair (fewer sequences: the keys of one trace are the cases above)."""
    if mode == "ranks":
        write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1, slow_step=1)
        path, new = tmp_path, None
    else:
        step_trace(tmp_path / "base.json", [("k_softmax", 10.0), ("k_mul", 10.0)])
        step_trace(tmp_path / "new.json", [("triton_fused", 12.0)], steps=3, step_us=130.0)
        path, new = tmp_path / "base.json", tmp_path / "new.json"
    seed = SEED * 1000 + (7 if mode == "ranks" else 8)
    rng = random.Random(seed)
    extra = ["enter", "b", "less_than_sign", "greater_than_sign"] if mode == "ranks" else ["o", "D"]
    sequences = [
        [*_sequence(rng), rng.choice(extra)] for _ in range(-(-SEQUENCES // 3))
    ]  # the keys are one trace's
    async with loaded(path, (120, 40), new=new) as (pilot, app):
        for n, keys in enumerate(sequences):
            await _play(pilot, keys)
            assert not app.shown_errors, (
                f"{mode}: sequence {n} (seed {seed}) {keys}: {app.shown_errors}"
            )
            if n % CHECK_EVERY == CHECK_EVERY - 1:
                await _still_answers(pilot, app)
        await _still_answers(pilot, app)
