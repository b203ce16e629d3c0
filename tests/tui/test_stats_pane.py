"""The stats pane driven with Pilot: toggling, sorting by key and by click, filtering, scopes,
ops/kernels, and rows tied to the timeline."""

from __future__ import annotations

import threading

import pytest

from tests.conftest import DATA, TORCH_ORDER, WORK_HEADERS
from tests.model.test_above_roof import ADD, MM, write_calls
from tests.tui.helpers import drawn, loaded, resized
from tui.widgets import stats_pane
from tui.widgets.stats_pane import StatsPane
from tui.widgets.stats_table import StatsTable
from tui.widgets.timeline import Timeline


@pytest.fixture
async def pane():
    async with loaded(DATA / "attribution.json", (140, 40)) as (pilot, app):
        await pilot.press("t")
        await pilot.pause()
        yield pilot, app


def names(table: StatsTable) -> list[str]:
    return [r.name for r in table.visible_rows()]


async def test_t_toggles_the_pane_and_it_opens_sorted_by_self_cuda(pane):
    pilot, app = pane
    table = app.query_one(StatsTable)
    assert app.focused is table
    # With GPU work, Self CUDA first, as the profiler's guide reads it.
    assert table.sort_key == "self_cuda" and table.descending
    headers = [c.header for c in table.columns_spec]
    # key_averages().table()'s order; no memory columns without allocator records.
    assert headers == [h for h in TORCH_ORDER if "Mem" not in h]
    assert "Self CUDA ▼" in str(table.columns["6"].label)
    assert names(table)[0] == "outer"
    await pilot.press("t")
    assert not app.query(StatsPane)
    assert app.query_one("#details").display


async def test_number_keys_sort_and_repeat_reverses(pane):
    pilot, app = pane
    table = app.query_one(StatsTable)
    assert table.sort_key == "self_cuda"  # the default: Self CUDA, largest first
    assert names(table)[:3] == ["outer", "inner", "graph"]
    await pilot.press("7")  # Self CUDA again: reversed
    assert names(table)[-1] == "outer"
    await pilot.press("8")  # Self CUDA %: the same key, so it reverses again
    assert names(table)[:3] == ["outer", "inner", "graph"]
    await pilot.press("1")  # Name, A to Z
    assert names(table) == sorted(names(table))


async def test_clicking_a_header_sorts_by_it(pane):
    pilot, app = pane
    table = app.query_one(StatsTable)
    calls = [c.header for c in table.columns_spec].index("# of Calls")
    table.post_message(
        StatsTable.HeaderSelected(
            table,
            list(table.columns)[calls],
            calls,
            table.columns[list(table.columns)[calls]].label,
        )
    )
    await pilot.pause()
    assert table.sort_key == "calls"
    assert names(table)[0] == "cudaLaunchKernel"  # 2 calls


async def test_filter_keeps_matching_names(pane):
    pilot, app = pane
    await pilot.click("#filter")
    await pilot.press(*"launch")
    table = app.query_one(StatsTable)
    assert sorted(names(table)) == [
        "(GPU work launched outside the trace)",
        "[graph #1] cudaGraphLaunch: 2 kernels",  # its replay's row, outside torch's table
        "cuLaunchKernel",
        "cudaGraphLaunch",
        "cudaLaunchKernel",
    ]


async def test_x_switches_to_kernels_and_v_cycles_scopes(pane):
    pilot, app = pane
    stats = app.query_one(StatsPane)
    await pilot.press("x")
    table = app.query_one(StatsTable)
    assert names(table) == ["K2", "K1", "K3", "G", "orphan"]
    await pilot.press("x", "v")
    assert stats.scope_name == "view"
    timeline = app.query_one(Timeline)
    timeline.set_window((45_000, 100_000))
    # No ProfilerStep here and nothing selected: step and subtree fall back to the whole trace.
    await pilot.press("v")
    assert stats.scope_name == "trace"
    await pilot.press("v")
    assert stats.scope_name == "view" and stats.scope.t0 == 45_000
    assert "inner" not in names(table)


async def test_highlighted_row_marks_its_slices_and_enter_jumps_to_the_longest(pane):
    pilot, app = pane
    table = app.query_one(StatsTable)
    timeline = app.query_one(Timeline)
    await pilot.press("1")  # by name
    table.move_cursor(row=names(table).index("cudaLaunchKernel") - 1)
    await pilot.press("down")
    assert table.row_at_cursor().name == "cudaLaunchKernel"
    assert [timeline.trace.slice_name(int(r)) for r in timeline.matches] == [
        "cudaLaunchKernel",
        "cudaLaunchKernel",
    ]
    await pilot.press("enter")
    assert timeline.trace.slice_name(timeline.selected) == "cudaLaunchKernel"
    assert int(timeline.trace.slices.dur[timeline.selected]) == 3_000  # the longer one


async def test_a_sort_goes_to_the_top_and_home_end_move_there(pane):
    pilot, app = pane
    table = app.query_one(StatsTable)
    await pilot.press("end")
    assert table.cursor_row == table.row_count - 1
    await pilot.press("5")  # CPU total: the cursor and the scroll go back to the top row
    assert table.cursor_row == 0 and table.scroll_offset.y == 0
    assert table.row_at_cursor().name == names(table)[0] == "outer"
    await pilot.press("down", "down", "home")
    assert table.cursor_row == 0


async def test_the_name_column_stays_while_scrolling_right(pane):
    _, app = pane
    assert app.query_one(StatsTable).fixed_columns == 1


async def test_escape_closes_the_pane_and_slash_focuses_its_filter(pane):
    pilot, app = pane
    await pilot.press("slash")
    assert app.focused is app.query_one("#filter")
    await pilot.press(*"oute")
    assert names(app.query_one(StatsTable)) == ["outer"]
    await pilot.press("escape")  # out of the filter, which stays
    assert app.focused is app.query_one(StatsTable) and names(app.query_one(StatsTable)) == [
        "outer"
    ]
    await pilot.press("escape")
    assert not app.query(StatsPane) and app.focused is app.query_one(Timeline)


async def test_v_cycles_the_scopes_forever(pane):
    pilot, app = pane
    pane_widget = app.query_one(StatsPane)
    seen = [pane_widget.scope_name]
    for _ in range(14):
        await pilot.press("v")
        seen.append(pane_widget.scope_name)
    # round and round, from wherever it starts: the same scopes in the same order each time
    # (loaded() checks that no press showed the error screen)
    period = len(set(seen))
    assert {"trace", "view"} <= set(seen) and period > 1
    assert all(seen[i] == seen[i + period] for i in range(len(seen) - period)), seen


async def test_the_pane_and_summary_give_the_same_numbers(shared):
    """One number per question: the pane's trace scope and `summary` count the same rows with
    the same values and the same totals, on a real trace."""
    import json

    from tests.conftest import SHARED
    from tests.tui.helpers import run

    path = SHARED / "tracelens/h100_bert_small.json.gz"
    doc = json.loads(run("summary", str(path), "--format", "json", "--top", "100000").stdout)
    keys = ["self_cpu_ns", "cpu_total_ns", "self_cuda_ns", "cuda_total_ns", "calls"]
    expected = {r["name"]: [r[k] for k in keys] for r in doc["rows"]}
    async with loaded(path, (160, 45)) as (pilot, app):
        await pilot.press("t")
        table = app.query_one(StatsTable)
        rows = table.visible_rows()
        shown = {
            r.name: [r.self_cpu_ns, r.cpu_total_ns, r.self_cuda_ns, r.cuda_total_ns, r.calls]
            for r in rows
        }
        totals = table.report.totals
        strip = str(app.query_one("#strip").render())
    assert shown == expected
    assert totals.self_cpu_ns == doc["summary"]["self_cpu_total_ns"]
    assert totals.self_cuda_ns == doc["summary"]["self_cuda_total_ns"]
    busy = doc["summary"]["gpu_busy_ns"] / doc["summary"]["wall_ns"]
    assert f"GPU busy: {busy:.1%}" in strip


def _footer(app) -> dict[str, int]:
    """The footer's keys that are fully on screen: description -> right edge."""
    from tui.widgets.key_footer import KeyFooter

    footer = app.screen.query_one(KeyFooter)
    return {k.description: k.end for k in footer.shown() if k.end <= footer.size.width}


async def test_at_80x24_the_pane_shows_eight_rows_and_the_footer_its_keys(shared):
    from tests.conftest import SHARED

    async with loaded(SHARED / "tracelens/h100_bert_small.json.gz", (80, 24)) as (pilot, app):
        assert app.focused is app.query_one(Timeline)
        await pilot.pause(0.1)  # the footer follows the focus on its next refresh
        assert {"Help", "Search", "Stats", "Quit", "GPU/CPU"} <= set(_footer(app))
        await pilot.press("t")
        await pilot.pause(0.1)
        table = app.query_one(StatsTable)
        assert table.scrollable_content_region.height - 1 >= 8  # rows under the header
        assert {"Help", "Ops/kernels", "Stats scope", "Summary in full"} <= set(_footer(app))
        strip = app.query_one("#strip-box")
        assert strip.size.height == 3
        await pilot.press("i")  # the summary in full: the verdict's reason and the evidence
        assert strip.has_class("open") and strip.size.height > 3
        await pilot.press("i")
        assert strip.size.height == 3


async def test_at_80_columns_the_columns_that_matter_come_first(shared):
    from tests.conftest import SHARED

    async with loaded(SHARED / "tracelens/h100_bert_small.json.gz", (80, 24)) as (pilot, app):
        await pilot.press("t")
        table = app.query_one(StatsTable)
        headers = [c.header for c in table.columns_spec]
        assert headers[:6] == [
            "Name",
            "Self CPU",
            "CPU total",
            "Self CUDA",
            "CUDA total",
            "# of Calls",
        ]
        # The rest after; the roofline's columns once found (in a thread).
        expected = TORCH_ORDER + WORK_HEADERS
        assert sorted(headers) == sorted(h for h in expected if h in headers)
        assert all(len(str(table.get_cell_at((r, 0)))) <= 24 for r in range(table.row_count))
        await pilot.press("4")  # the fourth column now: Self CUDA
        assert table.sort_key == "self_cuda"
        await resized(pilot, app, 200, 50)
        assert [c.header for c in table.columns_spec][:3] == ["Name", "Self CPU %", "Self CPU"]


async def test_tab_stays_in_the_pane_between_table_and_filter(pane):
    pilot, app = pane
    table = app.query_one(StatsTable)
    timeline = app.query_one(Timeline)
    window = timeline.window
    await pilot.press("tab")
    assert app.focused is app.query_one("#filter")
    await pilot.press("w", "s")  # typed into the filter, not zooming the timeline
    assert app.query_one("#filter").value == "ws" and timeline.window == window
    await pilot.press("shift+tab")
    assert app.focused is table


async def test_the_strip_names_the_scope_on_its_first_line(pane):
    pilot, app = pane
    first = str(app.query_one("#strip").render()).splitlines()[0]
    assert first.startswith(" Ops · scope trace ")
    await pilot.press("v", "x")
    first = str(app.query_one("#strip").render()).splitlines()[0]
    assert first.startswith(" Kernels · scope view ")


async def test_a_sort_by_a_column_in_view_keeps_the_columns_scrolled(shared):
    from tests.conftest import SHARED

    async with loaded(SHARED / "tracelens/h100_bert_small.json.gz", (80, 24)) as (pilot, app):
        await pilot.press("t")
        table = app.query_one(StatsTable)
        await pilot.press("right")  # one column
        x = table.scroll_offset.x
        assert x > 0
        await pilot.press("5")  # a column in view: nothing scrolls
        await pilot.pause()
        assert table.scroll_offset.x == x and table.cursor_row == 0


async def test_the_pane_opens_again_as_it_was_left(pane):
    pilot, app = pane
    await pilot.press("x", "v", "3")  # kernels, view scope, sorted by the third column
    before = app.query_one(StatsPane).state()
    await pilot.press("t", "t")
    again = app.query_one(StatsPane)
    assert again.kernels and again.scope_name == "view"
    assert again.state().sort == before.sort
    table = app.query_one(StatsTable)
    assert table.sort_key == before.sort[0] and table.descending == before.sort[2]


async def test_a_sort_by_a_column_off_to_the_right_scrolls_it_into_view(shared):
    from tests.conftest import SHARED

    async with loaded(SHARED / "tracelens/h100_bert_small.json.gz", (80, 24)) as (pilot, app):
        await pilot.press("t")
        table = app.query_one(StatsTable)
        for key in "9875":
            await pilot.press(key)
            await pilot.pause()
            x, _, width, _ = table._get_column_region(int(key) - 1)
            name_width = table._get_fixed_offset().left
            shown = table.scroll_offset.x + name_width, table.scroll_offset.x + table.size.width
            assert shown[0] <= x and x + width <= shown[1], (key, x, width, shown)


async def test_an_empty_table_says_why_and_what_to_press():
    async with loaded(DATA / "nested_cpu.json", (120, 40)) as (pilot, app):
        await pilot.press("t", "x")
        empty = app.query_one("#empty")
        assert empty.display and "No GPU work in this trace" in str(empty.render())
        await pilot.press("x", "slash", *"zzz")
        assert "No op name holds “zzz”" in str(empty.render())
        await pilot.press(*["backspace"] * 3)
        assert not empty.display and app.query_one(StatsTable).row_count


async def test_enter_goes_to_the_longest_call_inside_the_scope():
    async with loaded(DATA / "nested_cpu.json", (120, 40)) as (pilot, app):
        await pilot.press("t", "v", "v")
        pane = app.query_one(StatsPane)
        assert pane.scope_label == "step ProfilerStep#1"
        await pilot.press("slash", *"addmm", "tab", "enter")
        await pilot.pause()
        timeline = app.query_one(Timeline)
        # The 30 us call of ProfilerStep#1, not the longer 35 us one of ProfilerStep#2.
        assert timeline.trace.slices.start[timeline.selected] == 20_000


async def test_the_name_column_keeps_its_width_after_a_resize_and_a_filter(shared):
    from tests.conftest import SHARED

    async with loaded(SHARED / "tracelens/h100_bert_small.json.gz", (80, 24)) as (pilot, app):
        await pilot.press("t")
        table = app.query_one(StatsTable)
        await pilot.press("p", "5")  # frames listed, by CPU total: a long one on top
        await resized(pilot, app, 160, 45)
        assert table.render_line(1).text.startswith(" torch/nn/modules/module.py(1743): _call_impl")
        await pilot.press("slash", "X")
        await pilot.pause(0.2)
        name = table.get_cell_at((0, 0))
        assert table.render_line(1).text.startswith(
            f" {name}".ljust(table.ordered_columns[0].width)
        )
        await pilot.press("y", "tab", "tab", "backspace")  # back into the filter: it edits
        assert app.query_one("#filter").value == "X"


async def test_the_strip_says_how_close_to_the_hardware_once_found(shared):

    qwen = shared / "tracelens" / "h100_qwen1.5_0.5b_chat.json.gz"
    async with loaded(qwen, (160, 45)) as (pilot, app):
        await pilot.press("t")
        for _ in range(100):  # found in a thread
            await pilot.pause(0.05)
            pane = app.query_one(StatsPane)
            if pane.roof_line is not None:
                break
        await pilot.pause()
        strip = str(pane.query_one("#strip").render())
        assert "Roofline: elementwise at 57.8% of its roof (memory-bound); GEMM at 61.9%" in strip
        assert "COMPUTE-BOUND: elementwise 17.4 ms at 57.8% of its roof (memory side)" in strip
        # The table gained the roofline's columns, which sort like the others.
        table = pane.query_one(StatsTable)
        headers = [c.header for c in table.columns_spec]
        assert headers[-3:] == ["GFLOPs", "TFLOP/s", "% of roof"]
        table.scroll_to(x=table.max_scroll_x, animate=False)  # the scrollbar dragged right
        await pilot.pause()
        tflops = headers.index("TFLOP/s")
        x, _, width, _ = table._get_column_region(tflops)
        await pilot.click(StatsTable, offset=(x - int(table.scroll_x) + width // 2, 0))
        await pilot.pause()
        assert table.sort_key == "tflops"
        top = table.row_at_cursor()
        assert top is not None and top.work is not None and top.name == "aten::mm"
        await pilot.press("v")  # another scope: the line is the trace's, not shown there
        await pilot.pause()
        assert "Roofline" not in str(pane.query_one("#strip").render())


async def _builds_on_t(path, monkeypatch, built=None) -> tuple[list[bool], list[str]]:
    """Whether each build of the table on `t` had the roofline, and the headers at the end
    (`built`, if given, is set once the first build is done)."""
    builds = []
    real = StatsPane.rebuild

    def counted(pane, keep_place=False):
        builds.append(pane.roof is not None)
        real(pane, keep_place)
        if built is not None:
            built.set()

    monkeypatch.setattr(StatsPane, "rebuild", counted)
    async with loaded(path, (140, 40)) as (pilot, app):
        await pilot.press("t")
        await app.workers.wait_for_complete()
        await pilot.pause()
        headers = [c.header for c in app.query_one(StatsTable).columns_spec]
    return builds, headers


async def test_a_roofline_found_at_once_is_in_the_tables_first_build(tmp_path, monkeypatch):
    """No second build, layout and frame for the roofline's columns when its thread is quick
    (here a minute, for a loaded machine: the wait ends as soon as the thread does)."""
    monkeypatch.setattr(stats_pane, "ROOFLINE_WAIT_S", 60.0)
    builds, headers = await _builds_on_t(
        write_calls(tmp_path, [(*ADD, 20), (*MM, 10_000)]), monkeypatch
    )
    assert builds == [True] and headers[-3:] == ["GFLOPs", "TFLOP/s", "% of roof"]


async def test_a_slow_roofline_is_shown_when_found(tmp_path, monkeypatch):
    """Found only once the table was built without it (the thread waits for that build)."""
    real, first_build = stats_pane.summary_roofline, threading.Event()

    def slow(trace):
        first_build.wait(10)
        return real(trace)

    monkeypatch.setattr(stats_pane, "summary_roofline", slow)
    path = write_calls(tmp_path, [(*ADD, 20), (*MM, 10_000)])
    builds, headers = await _builds_on_t(path, monkeypatch, first_build)
    assert builds == [False, True] and headers[-3:] == ["GFLOPs", "TFLOP/s", "% of roof"]


async def test_a_roofline_that_fails_leaves_the_table_without_its_columns(tmp_path, monkeypatch):
    def broken(trace):
        raise ValueError("a bug in a model")

    monkeypatch.setattr(stats_pane, "summary_roofline", broken)
    builds, headers = await _builds_on_t(
        write_calls(tmp_path, [(*ADD, 20), (*MM, 10_000)]), monkeypatch
    )
    assert builds == [False] and "GFLOPs" not in headers  # and no error screen (`loaded`)


async def test_s_groups_the_ops_by_input_shape_and_enter_finds_a_call_of_that_shape(shared):
    bert = shared / "tracelens" / "h100_bert_small.json.gz"
    async with loaded(bert, (160, 45)) as (pilot, app):
        await pilot.press("t", "S")
        pane = app.query_one(StatsPane)
        table = app.query_one(StatsTable)
        for _ in range(100):  # the shapes are read in a thread
            await pilot.pause(0.05)
            if not pane.reading_shapes:
                break
        assert table.report.table.name == "shapes"
        assert "Ops by shape" in str(pane.query_one("#strip").render())
        assert names(table).count("aten::addmm") == 4
        await pilot.press("slash", *"[[30522]", "tab")  # a filter matches shapes too
        assert [(r.name, r.shapes[:9]) for r in table.visible_rows()] == [
            ("aten::addmm", "[[30522],")
        ]
        await pilot.press("enter")
        timeline = app.query_one(Timeline)
        chosen = timeline.trace.args(timeline.selected)
        assert timeline.trace.slice_name(timeline.selected) == "aten::addmm"
        assert chosen["Input Dims"][0] == [30522] and len(timeline.matches) == 1
        await pilot.press("t", "t")  # opened again as it was left
        table = app.query_one(StatsTable)
        assert table.report.table.name == "shapes"
        await pilot.press("slash", *"addmmx", "tab", "slash", "backspace", "tab")
        assert app.query_one(StatsPane).query_one("#filter").value == "addmm"  # cursor at end
        table.scroll_to(x=200, animate=False)
        await pilot.press("S")
        await pilot.pause()
        assert table.report.table.name == "ops" and table.scroll_x == 0  # from its Name on


async def test_p_lists_the_python_frames_the_table_counts_and_the_pane_keeps_it(tmp_path):
    from tests.deep_stack import write_deep_stack

    path = write_deep_stack(tmp_path / "deep.json", depth=5)  # 11 Python frames
    async with loaded(path, (120, 30)) as (pilot, app):
        await pilot.press("t")
        table = app.query_one(StatsTable)
        first = str(app.query_one("#strip").render()).splitlines()[0]
        assert "11 Python frames not listed (p)" in first
        assert "aten::addmm" in names(table) and not any(".py(" in n for n in names(table))
        await pilot.press("p")
        assert "model.py(0): forward" in names(table)
        assert "Python frames listed (p)" in str(app.query_one("#strip").render())
        await pilot.press("t", "t")  # closed and opened again: as it was left
        assert "model.py(0): forward" in names(app.query_one(StatsTable))
        await pilot.press("p")
        assert not any(".py(" in n for n in names(app.query_one(StatsTable)))


async def test_right_and_left_scroll_the_table_by_whole_columns():
    """Each press brings the next column to the left edge, just right of Name (Textual's own
    scrolling moved a cell a press: some 60 presses to the roofline columns)."""
    async with loaded(DATA / "attribution.json", (80, 24)) as (pilot, app):
        await pilot.press("t")
        table = app.query_one(StatsTable)
        await pilot.pause()
        widths = [c.get_render_width(table) for c in table.ordered_columns]
        headers = [str(c.label).strip() for c in table.ordered_columns]
        assert sum(widths) > table.size.width  # columns off to the right
        await pilot.press("right")
        assert table.scroll_x == widths[1]
        assert table.render_line(0).text[widths[0] :].lstrip().startswith(headers[2])
        await pilot.press("right", "right")
        assert table.scroll_x == min(sum(widths[1:4]), table.max_scroll_x)
        await pilot.press("left", "left", "left")
        assert table.scroll_x == 0


async def test_with_many_steps_the_strip_lists_the_longest(tmp_path):
    import json

    from tests.model.test_diff import step_trace
    from tui.model.present.report import STRIP_STEPS

    path = tmp_path / "steps.json"
    step_trace(path, [("k_add", 10.0)], steps=40)
    doc = json.loads(path.read_text())
    for e in doc["traceEvents"]:  # ProfilerStep#30 takes 50 us more; the steps after it move
        if e["ts"] >= 3100:
            e["ts"] += 50
        elif e["name"] == "ProfilerStep#30":
            e["dur"] += 50
    path.write_text(json.dumps(doc))
    async with loaded(path, (120, 40)) as (pilot, app):
        await pilot.press("t", "i")
        await app.workers.wait_for_complete()
        await pilot.pause()
        strip = str(app.query_one("#strip").render())
    assert f"Steps (40; the {STRIP_STEPS} longest by CPU time" in strip
    listed = [int(w.split("#")[1]) for w in strip.split() if w.startswith("ProfilerStep#")]
    assert len(listed) == STRIP_STEPS and listed == sorted(listed) and 30 in listed


async def test_the_open_strip_scrolls_to_its_last_line(tmp_path):
    from tests.model.test_diff import step_trace

    path = tmp_path / "steps.json"
    step_trace(path, [("k_add", 10.0)], steps=25)
    async with loaded(path, (80, 24)) as (pilot, app):
        await pilot.press("t", "i")
        await app.workers.wait_for_complete()
        await pilot.pause()
        box = app.query_one("#strip-box")
        lines = app.query_one("#strip").size.height  # wrapped at 80 columns
        assert box.size.height < lines and box.max_scroll_y > 0
        box.scroll_end(animate=False)
        await pilot.pause()
        assert "ProfilerStep#23" in drawn(app)  # the last step listed, on screen
