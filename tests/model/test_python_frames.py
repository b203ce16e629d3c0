"""The op table counts Python frames (`with_stack=True`) but lists them only when asked: their
rows would fill its top with wrappers (`_call_impl`, `threading.py ...`) and no aten op.

On the hand-made with_stack trace (tests/deep_stack.py), whose Python frames are known by name."""

from __future__ import annotations

from tests.deep_stack import FRAMES, write_deep_stack
from tui.model.passes import load_trace
from tui.model.present.tables import scope_report

DEPTH = 5
PYTHON = {f"frames.py({d}): level_{d}" for d in range(DEPTH)} | {
    f"model.py({f}): forward" for f in range(FRAMES)
}


def test_python_frames_are_counted_not_listed_and_every_number_stays(tmp_path):
    trace = load_trace(write_deep_stack(tmp_path / "deep.json", depth=DEPTH))
    hidden, listed = scope_report(trace), scope_report(trace, frames=True)
    assert {r.name for r in listed.rows if r.python} == PYTHON
    assert hidden.frames_hidden == len(PYTHON) and listed.frames_hidden == 0
    assert not any(r.python for r in hidden.rows)
    # The same ops, with the same numbers, and the same totals (the shares' denominators).
    assert hidden.rows == [r for r in listed.rows if not r.python]
    assert {"aten::linear", "aten::addmm", "cudaLaunchKernel"} <= {r.name for r in hidden.rows}
    assert hidden.totals == listed.totals


def test_the_by_shape_table_leaves_them_out_too_and_the_kernel_table_has_none(tmp_path):
    trace = load_trace(write_deep_stack(tmp_path / "deep.json", depth=DEPTH))
    by_shape = scope_report(trace, by_shape=True)
    assert by_shape.frames_hidden == len(PYTHON) and not any(r.python for r in by_shape.rows)
    kernels = scope_report(trace, kernels=True)
    assert kernels.frames_hidden == 0 and {r.name for r in kernels.rows} == {
        "gemm_0",
        "gemm_1",
        "gemm_2",
    }
