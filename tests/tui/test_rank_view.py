"""A folder of rank traces in the viewer: the rank table, a rank's timeline and back, and the
same time window on another rank."""

from __future__ import annotations

import pytest

from tests.bench.make_rank_set import write_rank_set
from tests.tui.helpers import loaded
from tui.screens.ranks import RankScreen
from tui.screens.trace import TraceScreen
from tui.widgets.key_footer import KeyFooter
from tui.widgets.rank_view import RankView
from tui.widgets.timeline import Timeline


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranks")
    write_rank_set(folder, ranks=4, steps=3, slow_rank=2, slow_step=1)
    return folder


def _cells(table, row):
    return [str(c) for c in table.get_row_at(row)]


async def test_a_rank_folder_opens_on_its_rank_table(ranks):
    async with loaded(ranks, (120, 40)) as (_pilot, app):
        view = app.query_one(RankView)
        table = view.query_one("#ranks")
        assert app.focused is table and table.row_count == 4
        assert _cells(table, 2)[:2] == ["2", "slowest, straggler"]
        head = str(view.query_one("#rank-head").render())
        assert "straggler: rank 2 (last to arrive at 1 of 3 collectives" in head
        matrix = view.query_one("#matrix")
        assert [c.strip() for c in _cells(matrix, 2)] == ["2", "7.15 ms", "11.2 ms*", "7.15 ms"]
        assert sum("*" in c for r in range(4) for c in _cells(matrix, r)) == 1
        # The slow step's units line up, the `*` standing past them.
        step = [_cells(matrix, r)[2] for r in range(4)]
        assert len({len(c) for c in step}) == 1 and {c[-1] for c in step} == {" ", "*"}
        assert view.query_one("#collectives").row_count == 3
        assert not app.query(Timeline)


async def test_enter_opens_a_ranks_timeline_and_b_comes_back(ranks):
    async with loaded(ranks, (120, 40)) as (pilot, app):
        await pilot.press("down", "down", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        timeline = app.query_one(Timeline)
        assert app.rank == 2 and timeline.trace.path.endswith("rank2.pt.trace.json")
        assert isinstance(app.screen, TraceScreen) and app.focused is timeline
        assert isinstance(app.screen_stack[-2], RankScreen)  # under it, to come back to
        await pilot.press("greater_than_sign")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("b")
        assert app.query_one(RankView).display and not app.query(Timeline)
        table = app.query_one("#ranks")
        assert app.focused is table and app.rank is None
        assert table.cursor_row == 3  # on the rank last shown


async def test_another_rank_opens_at_the_same_time(ranks):
    async with loaded(ranks, (120, 40)) as (pilot, app):
        await pilot.press("enter")  # rank 0
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("w", "w", "d")
        timeline = app.query_one(Timeline)
        base = timeline.trace.base_time_ns
        shown = tuple(base + t for t in timeline.window)
        await pilot.press("greater_than_sign")
        await app.workers.wait_for_complete()
        await pilot.pause()
        timeline = app.query_one(Timeline)
        assert app.rank == 1 and timeline.trace.path.endswith("rank1.pt.trace.json")
        assert tuple(timeline.trace.base_time_ns + t for t in timeline.window) == shown
        await pilot.press("less_than_sign", "less_than_sign")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.rank == 3  # around the end


async def test_a_rank_that_fails_is_listed_and_the_rest_shown(tmp_path):
    write_rank_set(tmp_path, ranks=3, steps=1)
    (tmp_path / "rank1.pt.trace.json").write_text(
        '{"distributedInfo": {"rank": 1}, "traceEvents": 7}'
    )
    async with loaded(tmp_path, (120, 40)) as (_pilot, app):
        view = app.query_one(RankView)
        assert view.query_one("#ranks").row_count == 2
        assert "failed: rank 1: " in str(view.query_one("#rank-head").render())


async def test_at_80x24_every_rank_and_its_mark_are_on_screen(ranks):
    async with loaded(ranks, (80, 24)) as (_pilot, app):
        table = app.query_one("#ranks")
        lines = [table.render_line(y).text for y in range(table.size.height)]
        assert [line.split()[:3] for line in lines[1:5]] == [
            ["0", "-", "7.15"],
            ["1", "-", "7.15"],
            ["2", "slowest,", "straggler"],
            ["3", "-", "7.15"],
        ]


async def test_at_80x24_tab_reaches_the_matrix_and_the_collectives(ranks):
    async with loaded(ranks, (80, 24)) as (pilot, app):
        matrix, collectives = app.query_one("#matrix"), app.query_one("#collectives")
        assert matrix.size.height >= 2 and collectives.size.height >= 2
        assert matrix.region.bottom <= 23 and collectives.region.bottom <= 23
        await pilot.press("tab")
        assert app.focused is matrix
        await pilot.press("down", "down", "enter")  # a matrix row opens its rank
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.rank == 2
        await pilot.press("b", "tab", "tab")
        assert app.focused is collectives


async def test_another_rank_opens_inside_its_own_trace(ranks):
    """A window before the next rank's trace starts (its clock started later): that rank opens
    inside its own span (the ruler once failed on a window before the trace's start)."""
    async with loaded(ranks, (120, 40)) as (pilot, app):
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.post_message(TraceScreen.OtherRankWanted(1, (0, 1_000)))
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        timeline = app.query_one(Timeline)
        assert app.rank == 1 and timeline.window == (0, 1_000)


async def test_a_set_big_enough_for_the_pool_opens_its_rank_table(tmp_path, monkeypatch):
    """Above POOL_FROM_BYTES the ranks are read by worker processes. Started once the viewer had
    the terminal, multiprocessing's resource tracker failed, and the load waited at 0% forever
    (in a process where nothing had started the tracker before)."""
    from tui.model.passes import ranks as rank_pass

    write_rank_set(tmp_path, ranks=2, steps=2, slow_rank=1, slow_step=1)
    monkeypatch.setattr(rank_pass, "POOL_FROM_BYTES", 0)
    async with loaded(tmp_path, (120, 30)) as (_, app):
        assert isinstance(app.screen, RankScreen)
        assert len(app.query_one(RankView).report.rows) == 2


async def test_enter_on_a_collective_opens_the_rank_that_waited_longest_at_it(tmp_path):
    """Rank 0 is late to step 1's all-reduce, the top collective, where ranks 1 and 2 wait for
    it: enter opens rank 1 (the first of the longest waiters) framed on its all-reduce."""
    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=0, slow_step=1)
    async with loaded(tmp_path, (120, 40)) as (pilot, app):
        await pilot.press("tab", "tab")
        assert app.focused is app.query_one("#collectives")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        timeline = app.query_one(Timeline)
        assert app.rank == 1 and isinstance(app.screen, TraceScreen)
        trace = timeline.trace
        s = trace.slices
        kernels = trace.rows_named(lambda n: n.startswith("ncclDevKernel_AllReduce"))
        longest = int(kernels[s.dur[kernels].argmax()])
        start, dur = int(s.start[longest]), int(s.dur[longest])
        assert dur > 4_000_000  # the wait for rank 0, in it
        # A tenth of it either side, moved inside the trace (the all-reduce ends near its end).
        t0, t1 = timeline.window
        assert t1 - t0 == dur + 2 * (dur // 10) and t0 <= start and start + dur <= t1
        assert timeline.selected == longest  # its details on screen


async def test_numbers_align_right_and_the_last_columns_show_whole(ranks):
    async with loaded(ranks, (80, 24)) as (pilot, app):
        table = app.query_one("#ranks")
        lines = [table.render_line(y).text for y in range(5)]
        step = lines[0].index("Step (median)") + len("Step (median)")
        assert {line[step - 1] for line in lines[1:]} == {"s"}  # "7.15 ms" ends there
        await pilot.press(*["right"] * 20)  # to the last columns, a column at a time
        await pilot.pause()
        # The first column after the fixed Rank starts at the left edge: no cut column.
        assert table.scroll_x == table.max_scroll_x > 0
        assert round(table.scroll_x) in table._edges()
        headers = {c.label.plain for c in table.columns.values()}
        assert table.render_line(0).text.split()[1] in headers


async def test_the_footer_and_help_say_what_enter_does_on_each_table(ranks):
    async with loaded(ranks, (120, 40)) as (pilot, app):
        footer = app.screen.query_one(KeyFooter)
        assert footer.shown()[0].description == "Open the rank's timeline"
        await pilot.press("tab", "tab")
        await pilot.pause()
        assert app.focused.id == "collectives"
        assert footer.shown()[0].description == "Go to it, on the rank that waited longest"
        await pilot.press("question_mark")
        await pilot.pause()
        assert ("⏎", "Go to it, on the rank that waited longest") in [
            (k.replace("enter", "⏎"), d) for k, d in app.screen.rows
        ]
