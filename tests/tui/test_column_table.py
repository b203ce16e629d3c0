"""The tables draw each one-line cell directly: the same segments as Textual's DataTable gives,
on every table the app shows (ops, kernels, by shape, the diff, the rank set's three)."""

from __future__ import annotations

from rich.segment import Segment
from textual.widgets import DataTable

from tests.bench.make_rank_set import write_rank_set
from tests.conftest import DATA
from tests.model.test_diff import step_trace
from tests.tui.helpers import loaded
from tui.widgets.column_table import ColumnTable


def _simple(lines):
    return [[(s.text, s.style) for s in Segment.simplify(line)] for line in lines]


def _compare(table: ColumnTable, styles) -> int:
    """Every cell on the table, under and off the cursor, as drawn here and by DataTable;
    how many this table drew itself."""
    fast = 0
    widths = [c.get_render_width(table) for c in table.ordered_columns]
    for row in range(-1, min(table.row_count, 30)):
        for column, width in enumerate(widths):
            for style in styles:
                for cursor in (False, True):
                    table._cell_render_cache.clear()
                    ours = table._one_line_cell(row, column, style, width, cursor, False)
                    table._cell_render_cache.clear()
                    theirs = DataTable._render_cell(table, row, column, style, width, cursor)
                    if ours is not None:
                        fast += 1
                        assert _simple(ours) == _simple(theirs), (table.id, row, column)
    return fast


def _styles(table: ColumnTable):
    return [table.rich_style, table.get_component_rich_style("datatable--even-row")]


async def test_the_stats_tables_draw_as_textual_does():
    async with loaded(DATA / "gpu_streams.json", (120, 30)) as (pilot, app):
        for keys in (["t"], ["x"], ["S"]):  # the ops, the kernels, the kernels by shape
            await pilot.press(*keys)
            await app.workers.wait_for_complete()
            await pilot.pause()
            (table,) = app.screen.query("StatsTable")
            assert _compare(table, _styles(table)) > table.row_count


async def test_the_diff_and_rank_tables_draw_as_textual_does(tmp_path):
    step_trace(tmp_path / "a.json", [("k_softmax", 10.0), ("k_mul", 10.0)])
    step_trace(tmp_path / "b.json", [("triton_fused", 12.0)], steps=3, step_us=130.0)
    async with loaded(tmp_path / "a.json", (120, 30), new=tmp_path / "b.json") as (pilot, app):
        await pilot.press("D")
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one("#diff", ColumnTable)
        assert _compare(table, _styles(table)) > table.row_count
    write_rank_set(tmp_path / "ranks", ranks=3, steps=2, slow_rank=1, slow_step=1)
    async with loaded(tmp_path / "ranks", (120, 40)) as (pilot, app):
        for table in app.screen.query(ColumnTable):
            assert _compare(table, _styles(table)) > table.row_count, table.id


def test_one_line_is_justified_as_rich_justifies_it():
    from rich.text import Text

    from tui.widgets.column_table import _laid_out

    assert _laid_out(Text("ab", justify="right"), 5).plain == "   ab"
    assert _laid_out(Text("ab ", justify="right"), 5).plain == "   ab"  # as Rich: stripped
    assert _laid_out(Text("ab", justify="left"), 5).plain == "ab   "
    assert _laid_out(Text("ab", justify="center"), 5).plain == " ab  "
    assert _laid_out(Text("ab"), 5).plain == "ab"


async def test_no_column_is_shown_cut_at_the_right_edge_and_end_goes_to_the_last_row():
    """A cut number reads as another (`3.08 ms` cut to `3.0`): the cut column stays blank."""
    import re

    async with loaded(DATA / "gpu_streams.json", (70, 30)) as (pilot, app):
        await pilot.press("t")
        await pilot.pause()
        table = app.query_one("StatsTable")
        headers = {str(c.label) for c in table.columns.values()}
        for _ in range(3):
            shown = re.split(r"\s{2,}", table.render_line(0).text.strip())
            assert shown and set(shown) <= headers, shown
            rows = [table.render_line(y).text.rstrip() for y in range(1, table.row_count + 1)]
            assert all(len(r) <= len(table.render_line(0).text.rstrip()) + 1 for r in rows)
            await pilot.press("right")
            await pilot.pause()
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("home")
        assert table.cursor_row == 0
