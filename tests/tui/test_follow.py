"""`trace-tui --follow DIR`: a newer trace a job writes is said once it is complete, and `F`
opens it at the same step and place; a rank folder's table comes back over the newest traces."""

from __future__ import annotations

import os
import shutil

from tests.bench.make_rank_set import write_rank_set
from tests.model.test_diff import step_trace
from tests.tui.helpers import notes
from tui.cli import make_app
from tui.screens.ranks import RankScreen
from tui.screens.trace import TraceScreen
from tui.widgets.key_footer import KeyFooter


def _later(path, seconds):
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 10**9))


async def _until(pilot, test, tries=100):
    for _ in range(tries):
        if test():
            return True
        await pilot.pause(0.05)
    return False


async def test_a_newer_trace_is_said_when_complete_and_f_opens_it_at_the_same_step(tmp_path):
    step_trace(tmp_path / "run.1.json", [("k_add", 10.0)], steps=4)
    app = make_app(tmp_path, follow=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: isinstance(app.screen, TraceScreen))
        first = app.screen
        assert first.trace.path.endswith("run.1.json")
        first.timeline.set_window((200_000, 250_000))  # in the third step
        assert "F" not in first.active_bindings  # nothing newer yet
        newer = tmp_path / "run.2.json"
        step_trace(tmp_path / "whole.tmp", [("k_mul", 20.0)], steps=4)
        whole = (tmp_path / "whole.tmp").read_bytes()
        newer.write_bytes(whole[: len(whole) // 2])  # being written: not said
        _later(newer, 5)
        await pilot.pause(0.5)
        assert not app.following.newer, [n.message for n in app._notifications]
        newer.write_bytes(whole)
        _later(newer, 10)
        # The toast is a message of its own: under load it can come a frame after the list.
        assert await _until(
            pilot, lambda: app.following.newer and "run.2.json" in " ".join(notes(app))
        )
        await pilot.pause()
        assert first.active_bindings["F"].enabled
        # The toast fades; the footer keeps F, even at 80 columns, until it is pressed.
        footer = [k.key for k in first.query_one(KeyFooter).shown()]
        assert footer[-2:] == ["F", "question_mark"], footer
        await pilot.press("F")
        assert await _until(
            pilot, lambda: isinstance(app.screen, TraceScreen) and app.screen is not first
        )
        shown = app.screen
        assert shown.trace.path.endswith("run.2.json")
        assert shown.timeline.window == (200_000, 250_000)  # the same place in the same step
        assert not app.following.newer


async def test_a_rank_folder_comes_back_over_each_ranks_newest_trace(tmp_path):
    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1, slow_step=1)
    app = make_app(tmp_path, follow=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await _until(pilot, lambda: isinstance(app.screen, RankScreen))
        before = app.ranks.files
        later = tmp_path / "later"
        write_rank_set(later, ranks=3, steps=2, slow_rank=2, slow_step=1)
        written = sorted(later.iterdir())
        for f in written[:2]:
            moved = tmp_path / f.name.replace("rank", "rank_b")
            shutil.move(f, moved)
            _later(moved, 30)
        assert await _until(pilot, lambda: len(app.following.newer) == 2)
        # Two ranks of three have a newer trace: a table over both runs would mix their steps.
        # (The toast follows the count, in a message of its own.)
        said = "Newer traces for 2 of 3 ranks; F waits for the rest."
        assert await _until(pilot, lambda: said in notes(app)), notes(app)
        await pilot.press("F")
        await pilot.pause()
        assert app.ranks.files == before and not app.following.ready
        moved = tmp_path / written[2].name.replace("rank", "rank_b")
        shutil.move(written[2], moved)
        _later(moved, 30)
        assert await _until(pilot, lambda: app.following.ready)
        await pilot.press("F")
        assert await _until(
            pilot, lambda: isinstance(app.screen, RankScreen) and app.ranks.files != before
        )
        assert all("rank_b" in p.name for p in app.ranks.files.values())
        assert app.ranks.older == 3  # the first run's traces
        assert await _until(pilot, lambda: app.screen.query("RankView"))
        assert app.screen.query_one("RankView").report.straggler == 2
        # A round later, rank 0 runs ahead: its third trace is there before the others'
        # second. The set is the round every rank has finished, never a mix of two.
        for run, ranks in (("c", (0, 1, 2)), ("d", (0,))):
            write_rank_set(tmp_path / run, ranks=3, steps=2, slow_rank=1, slow_step=1)
            for rank in ranks:
                moved = tmp_path / f"rank_{run}{rank}.pt.trace.json"
                shutil.move(tmp_path / run / f"rank{rank}.pt.trace.json", moved)
                _later(moved, 60 if run == "c" else 90)
        assert await _until(pilot, lambda: app.following.ready)
        assert await _until(pilot, lambda: len(app.following.per_rank.get(0, ())) == 2)
        await pilot.press("F")
        assert await _until(
            pilot, lambda: all("rank_c" in p.name for p in app.ranks.files.values())
        )
        assert app.following.per_rank[0] == [tmp_path / "rank_d0.pt.trace.json"]
        assert app.ranks.older == 6  # two runs before it; rank 0's next one is newer, not older


async def test_a_shorter_newer_trace_opens_within_its_own_span(tmp_path):
    step_trace(tmp_path / "long.json", [("k_add", 10.0)], steps=40)
    app = make_app(tmp_path, follow=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: isinstance(app.screen, TraceScreen))
        first = app.screen  # the home view: all 40 steps
        short = tmp_path / "short.json"
        step_trace(short, [("k_add", 10.0)], steps=2)
        _later(short, 10)
        assert await _until(pilot, lambda: app.following.ready)
        await pilot.press("F")
        assert await _until(
            pilot, lambda: isinstance(app.screen, TraceScreen) and app.screen is not first
        )
        shown = app.screen
        # the whole newer trace, not the 40 steps' span around its 2
        assert shown.timeline.window == (0, shown.trace.span_ns)
        assert not notes(app)  # the toast that offered F is gone


def test_the_viewer_waits_for_the_first_trace_of_an_empty_folder(tmp_path, capsys):
    import threading

    from tui.commands.view import _wait_for_a_trace
    from tui.model.ingest.watch import Watch

    watch = Watch(tmp_path)
    assert watch.newest is None  # nothing written yet: the viewer waits, not refuses
    waiting = threading.Thread(target=_wait_for_a_trace, args=(watch, str(tmp_path), 0.05))
    waiting.start()
    waiting.join(0.5)
    assert waiting.is_alive()  # nothing written: it waits
    step_trace(tmp_path / "first.json", [("k_add", 10.0)])
    waiting.join(10)
    assert not waiting.is_alive()  # the first complete trace ends the wait
    assert capsys.readouterr().out == f"waiting for a complete trace in {tmp_path} (ctrl+c stops)\n"


async def test_a_folder_of_one_trace_that_becomes_a_jobs_ranks_opens_their_table(tmp_path):
    """The viewer started before the job's ranks wrote theirs: F opens the rank table."""
    later = tmp_path / "later"
    write_rank_set(later, ranks=3, steps=2, slow_rank=1, slow_step=1)
    shutil.move(later / "rank0.pt.trace.json", tmp_path / "rank0.pt.trace.json")
    app = make_app(tmp_path, follow=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await _until(pilot, lambda: isinstance(app.screen, TraceScreen))
        for rank in (1, 2):
            moved = tmp_path / f"rank{rank}.pt.trace.json"
            shutil.move(later / f"rank{rank}.pt.trace.json", moved)
            _later(moved, 30)
        assert await _until(pilot, lambda: len(app.following.newer) == 2)
        await pilot.press("F")
        assert await _until(pilot, lambda: isinstance(app.screen, RankScreen))
        assert sorted(app.ranks.files) == [0, 1, 2]
        assert await _until(pilot, lambda: app.screen.query("RankView"))
        assert app.screen.query_one("RankView").report.straggler == 1
        assert app.following.shown_ranks is app.ranks and not app.following.ready
