"""The panes render from the table spec: their headers are the text output's, header for
header (the stats pane, the diff pane, the rank view)."""

from __future__ import annotations

import re

from tests.bench.make_rank_set import write_rank_set
from tests.conftest import DATA
from tests.model.test_diff import step_trace
from tests.model.test_table_spec import ruled_tables
from tests.tui.helpers import loaded, run
from tui.widgets.diff_pane import DiffPane
from tui.widgets.rank_view import RankView
from tui.widgets.stats_table import StatsTable


def labels(table) -> list[str]:
    """A DataTable's column labels, without the sort mark."""
    return [str(c.label).removesuffix(" ▼").removesuffix(" ▲") for c in table.columns.values()]


async def test_the_stats_panes_headers_are_the_summarys():
    path = DATA / "pipelined_steps.json"
    for keys, flags in (((), ()), (("x",), ("--kernels",))):
        async with loaded(path, (160, 40)) as (pilot, app):
            await pilot.press("t", *keys)
            await pilot.pause()
            shown = labels(app.query_one(StatsTable))
        text = run("summary", str(path), *flags, "--no-cache").stdout
        assert shown == ruled_tables(text)[-1][0], flags


async def test_the_diff_panes_headers_are_the_diffs(tmp_path):
    step_trace(tmp_path / "a.json", [("k_softmax", 10.0), ("k_mul", 10.0)])
    step_trace(tmp_path / "b.json", [("triton_fused", 12.0)], step_us=130.0)
    text = run("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--no-cache").stdout
    tables = ruled_tables(text)[1:]  # after the headline
    async with loaded(tmp_path / "a.json", (160, 40), new=tmp_path / "b.json") as (pilot, app):
        await pilot.press("D")
        await pilot.pause()
        for name, table in zip(("ops", "kernels", "regions"), tables, strict=True):
            pane = app.query_one(DiffPane)
            assert pane.table == name
            shown = labels(pane.query_one("#diff"))
            # The pane puts the change right after the name: the same headers, reordered.
            assert sorted(shown) == sorted(table[0]) and shown[0] == table[0][0], name
            await pilot.press("x")
            await pilot.pause()


async def test_the_rank_views_headers_are_the_rank_tables(tmp_path):
    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1, slow_step=0)
    lines = run("summary", str(tmp_path), "--no-cache").stdout.splitlines()
    ranks = next(line for line in lines if line.startswith("Rank  Mark"))
    collectives = next(line for line in lines if line.startswith("Collective  "))
    async with loaded(tmp_path, (160, 40)) as (_pilot, app):
        view = app.query_one(RankView)
        assert labels(view.query_one("#ranks")) == re.split(r"\s{2,}", ranks)
        assert labels(view.query_one("#collectives")) == re.split(r"\s{2,}", collectives)
