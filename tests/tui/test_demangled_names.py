"""C++ kernel names are shown demangled in the viewer (bars, details, the kernel table, search
messages), with the names as recorded one key (`M`) away; the model and `summary` keep them as
recorded."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.tui.helpers import loaded, notes, run
from tui.model import demangle as dm
from tui.model.ingest import load_trace
from tui.model.present.details import slice_details
from tui.model.present.names import shown_names
from tui.widgets.slice_details import SliceDetails
from tui.widgets.stats_table import StatsTable
from tui.widgets.timeline import Timeline

# C++23's std::bfloat16_t (`DF16b`), as AMD's aiter kernels are recorded: libstdc++ before
# GCC 13 refuses it, binutils' c++filt reads it.
AITER = (
    "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEE"
    "vPT0_PT_PfS4_S4_S4_diiiiiiib"
)
AITER_READ = (
    "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 64, 8, false, "
    "false, true, 1>(std::bfloat16_t*, std::bfloat16_t*, float*, std::bfloat16_t*, "
    "std::bfloat16_t*, std::bfloat16_t*, double, int, int, int, int, int, int, int, bool)"
)
SIMPLE = "_ZN3ops4gemmIfEEviPKT_"  # void ops::gemm<float>(int, float const*)


def _trace(tmp_path):
    events = [
        {"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
        {
            "ph": "X",
            "name": "cudaLaunchKernel",
            "cat": "cuda_runtime",
            "pid": 1,
            "tid": 1,
            "ts": 5,
            "dur": 4,
            "args": {"correlation": 1},
        },
        {
            "ph": "X",
            "name": "cudaLaunchKernel",
            "cat": "cuda_runtime",
            "pid": 1,
            "tid": 1,
            "ts": 20,
            "dur": 4,
            "args": {"correlation": 2},
        },
        {
            "ph": "X",
            "name": SIMPLE,
            "cat": "kernel",
            "pid": 0,
            "tid": 7,
            "ts": 10,
            "dur": 30,
            "args": {"correlation": 1, "stream": 7},
        },
        {
            "ph": "X",
            "name": "_ZN3bad",
            "cat": "kernel",
            "pid": 0,
            "tid": 7,
            "ts": 45,
            "dur": 5,
            "args": {"correlation": 2, "stream": 7},
        },
    ]
    path = tmp_path / "mangled.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_each_demangler_reads_a_name_and_leaves_the_rest_as_recorded():
    assert dm._through_libstdcxx([SIMPLE, "_ZN3bad"]) == [
        "void ops::gemm<float>(int, float const*)",
        "_ZN3bad",
    ]
    found = dm.demangle([SIMPLE, "_ZN3bad", "aten::mm", "ampere_sgemm_128x64_nn"])
    assert found == {SIMPLE: "void ops::gemm<float>(int, float const*)"}


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="binutils' c++filt is not installed")
def test_cxxfilt_reads_the_newest_manglings():
    assert dm.demangle([AITER]) == {AITER: AITER_READ}


def test_without_cxxfilt_libstdcxx_demangles(monkeypatch):
    monkeypatch.setattr(dm.shutil, "which", lambda _tool: None)
    assert dm.demangle([SIMPLE]) == {SIMPLE: "void ops::gemm<float>(int, float const*)"}


def test_the_details_show_the_demangled_name_and_say_how_to_see_the_recorded_one(tmp_path):
    trace = load_trace(_trace(tmp_path))
    kernel = trace.names.index(SIMPLE)
    row = int((trace.slices.name == kernel).nonzero()[0][0])
    details = dict(slice_details(trace, row))
    assert details["name"] == "void ops::gemm<float>(int, float const*)"
    assert "M shows every name as recorded" in details["C++ name"]
    shown_names(trace).raw = True
    details = dict(slice_details(trace, row))
    assert details["name"] == SIMPLE and "demangled" in details["C++ name"]
    assert trace.slice_name(row) == SIMPLE  # the model keeps the name as recorded


def test_summary_keeps_the_names_as_recorded(tmp_path):
    done = run("summary", str(_trace(tmp_path)), "--kernels")
    assert done.returncode == 0 and SIMPLE in done.stdout and "ops::gemm" not in done.stdout


async def test_m_switches_every_name_shown_between_demangled_and_recorded(tmp_path):
    async with loaded(_trace(tmp_path), (120, 30)) as (pilot, app):
        timeline = app.query_one(Timeline)
        trace = timeline.trace
        kernel = int((trace.slices.name == trace.names.index(SIMPLE)).nonzero()[0][0])
        timeline.select(kernel)
        await pilot.pause()
        details = app.screen.query_one(SliceDetails)
        assert "ops::gemm<float>" in str(details.render()) and "ops::gemm" in _bars(timeline)
        await pilot.press("M")
        await pilot.pause()
        assert SIMPLE in str(details.render()) and "ops::gemm" not in _bars(timeline)
        assert "shown as recorded" in notes(app)[-1]
        await pilot.press("M", "t", "x")
        await pilot.pause()
        names = [str(c) for c in app.screen.query_one(StatsTable).get_column_at(0)]
        assert "void ops::gemm<float>(int, float const*)" in names and "_ZN3bad" in names
        await pilot.press("t", "M")  # the pane closed, names as recorded, the pane again
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        names = [str(c) for c in app.screen.query_one(StatsTable).get_column_at(0)]
        assert SIMPLE in names


async def test_a_trace_without_cpp_names_has_no_m(tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(
        json.dumps(
            {
                "traceEvents": [
                    {
                        "ph": "X",
                        "name": "aten::mm",
                        "cat": "cpu_op",
                        "pid": 1,
                        "tid": 1,
                        "ts": 0,
                        "dur": 5,
                    }
                ]
            }
        )
    )
    async with loaded(path) as (_pilot, app):
        assert not app.screen.check_action("raw_names", ())


def _bars(timeline) -> str:
    return "".join(timeline.scene.labels)
