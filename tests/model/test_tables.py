"""The one table spec: torch's column order, what each trace shows, sort keys shared by the CLI
and the pane, shares of the scope's totals, and JSON keys."""

from __future__ import annotations

import pytest

from tests.conftest import DATA, OP_JSON_KEYS, TORCH_ORDER, WORK_HEADERS, WORK_JSON_KEYS
from tui.model.analysis.kernels import kernel_stats
from tui.model.analysis.ops import op_stats
from tui.model.analysis.scope import Scope
from tui.model.ingest import load_trace
from tui.model.present.tables import KERNELS, OPS, cells, row_json, scope_report


def test_the_op_table_has_torchs_columns_in_torchs_order():
    assert [c.header for c in OPS.columns if c.needs != "json"] == TORCH_ORDER + WORK_HEADERS


@pytest.mark.parametrize(
    ("name", "gpu", "memory"),
    [
        ("nested_cpu.json", False, False),
        ("attribution.json", True, False),
        ("memory_sync.json", True, True),
    ],
)
def test_columns_shown_follow_what_the_trace_has(name, gpu, memory):
    shown = [c.header for c in OPS.shown(load_trace(DATA / name))]
    expected = [
        h
        for h in TORCH_ORDER
        if (gpu or "CUDA" not in h or "Mem" in h) and (memory or "Mem" not in h)
    ]
    if memory and not gpu:
        expected = [h for h in expected if h not in ("CUDA Mem", "Self CUDA Mem")]
    assert shown == expected


def test_every_sort_key_sorts_and_shares_sort_as_their_base():
    trace = load_trace(DATA / "attribution.json")
    for table, rows in ((OPS, op_stats(trace)), (KERNELS, kernel_stats(trace))):
        for key in table.sort_keys:
            column = table.column(key)
            got = [column.value(r) for r in table.sort(rows, key)]
            assert got == sorted(got, reverse=column.numeric), (table.name, key)
        for share in (c for c in table.columns if c.share_of is not None):
            assert share.key in table.sort_keys and table.column(share.key).share_of is None


def test_shares_are_of_the_scopes_totals_and_totals_cover_every_row():
    trace = load_trace(DATA / "attribution.json")
    report = scope_report(trace)
    assert report.totals.self_cpu_ns == sum(r.self_cpu_ns for r in report.rows)
    assert report.totals.self_cuda_ns == sum(r.self_cuda_ns for r in report.rows)
    outer = next(r for r in report.rows if r.name == "outer")
    by_header = dict(
        zip(
            [c.header for c in report.columns],
            cells(report.columns, outer, report.totals),
            strict=True,
        )
    )
    assert by_header["Self CUDA %"] == f"{outer.self_cuda_ns / report.totals.self_cuda_ns:.2%}"
    kernels = scope_report(trace, kernels=True)
    assert kernels.totals.gpu_ns == sum(k.total_ns for k in kernels.rows)
    assert [r.name for r in kernels.rows] == ["K2", "K1", "K3", "G", "orphan"]


def test_a_windowed_scope_takes_its_summary_window():
    trace = load_trace(DATA / "nested_cpu.json")
    report = scope_report(trace, Scope(100_000, 160_000))
    assert report.summary.window == (100_000, 160_000)
    assert {r.name for r in report.rows} == {"ProfilerStep*", "aten::linear", "aten::addmm"}
    assert scope_report(trace).summary.window == (0, 160_000)  # the profiled steps


def test_json_rows_carry_every_value_under_its_key():
    trace = load_trace(DATA / "memory_sync.json")
    row = op_stats(trace)[0]
    doc = row_json(OPS, row)
    assert set(doc) == OP_JSON_KEYS
    assert doc["self_cpu_ns"] == row.self_cpu_ns and doc["calls"] == row.calls
    kernel = kernel_stats(load_trace(DATA / "attribution.json"))
    k1 = row_json(KERNELS, next(k for k in kernel if k.name == "K1"))
    assert k1["geometry"] == {"grid": "4x1x1", "block": "128x1x1", "registers": "32"}
    assert (
        set(k1)
        == {
            "name",
            "total_ns",
            "avg_ns",
            "min_ns",
            "max_ns",
            "calls",
            "share",
            "geometry",
            "graphs",
            "tensor_cores",
        }
        | WORK_JSON_KEYS
    )


def test_geometry_sorts_as_numbers_and_blanks_go_last():
    rows = kernel_stats(load_trace(DATA / "attribution.json"))
    by_registers = [r.geometry.get("registers", "") for r in KERNELS.sort(rows, "registers")]
    assert by_registers[0] == "32" and by_registers[-1] == ""
    by_grid = [r.geometry.get("grid", "") for r in KERNELS.sort(rows, "grid")]
    assert by_grid[0] == "4x1x1"


def test_prepare_computes_ahead_what_the_first_report_reads():
    from tui.model.analysis.steps import launch_window, profiled_window
    from tui.model.analysis.verdict import judge
    from tui.model.present.tables import prepare

    fresh = scope_report(load_trace(DATA / "gpu_streams.json"))
    trace = load_trace(DATA / "gpu_streams.json")
    prepare(trace)
    ahead = set(trace.derived)
    assert {f"op_stats {Scope()} False", f"op_stats {Scope(*launch_window(trace))} False"} <= ahead
    assert {f"kernel_stats {Scope()}", "has matmul kernels", "step windows"} <= ahead
    assert (
        scope_report(trace, kernels=True).rows
        == scope_report(load_trace(DATA / "gpu_streams.json"), kernels=True).rows
    )
    report = scope_report(trace)
    assert report.rows == fresh.rows and report.summary == fresh.summary
    # The header's verdict (the profiled window, launches in the launch window) is judged once.
    header = judge(trace, *profiled_window(trace), launch_window(trace))
    assert report.summary.verdict is header
