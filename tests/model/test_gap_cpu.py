"""An idle gap's details say what the CPU was doing during it, on a hand-made trace.

In microseconds: K1 runs [50, 100) and K2 [200, 250) on stream 7, so the GPU idles [100, 200).
Thread 1 is in ProfilerStep#1 [0, 300); inside it, `enumerate(DataLoader)#...__next__`
[98, 198) holds the frame `dataloader.py(703): __next__` [99, 197), which covers 97 us of the
gap; K2's launch is at [198, 199). Thread 2 sits in `threading.py(359): wait` [0, 300), and
thread 3 in `aten::mul` [150, 170), a fifth of the gap only.
"""

from __future__ import annotations

import json

from tui.model.analysis.gap_cpu import gap_cpu
from tui.model.analysis.gaps import idle_gaps
from tui.model.ingest import load_trace
from tui.model.present.details import gap_details

US = 1000
LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def _x(name: str, cat: str, tid: int, ts: float, dur: float, **args: object) -> dict:
    pid = 0 if cat == "kernel" else 1
    return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def _trace(tmp_path):
    events = [
        _x("ProfilerStep#1", "user_annotation", 1, 0, 300),
        _x("cudaLaunchKernel", "cuda_runtime", 1, 40, 2, correlation=1),
        _x(LOADER, "user_annotation", 1, 98, 100),
        _x("dataloader.py(703): __next__", "python_function", 1, 99, 98),
        _x("cudaLaunchKernel", "cuda_runtime", 1, 198, 1, correlation=2),
        _x("threading.py(359): wait", "python_function", 2, 0, 300),
        _x("aten::mul", "cpu_op", 3, 150, 20),
        _x("K1", "kernel", 7, 50, 50, correlation=1, stream=7),
        _x("K2", "kernel", 7, 200, 50, correlation=2, stream=7),
    ]
    path = tmp_path / "gap.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return load_trace(path)


def test_the_innermost_call_covering_most_of_the_gap_per_thread(tmp_path):
    trace = _trace(tmp_path)
    found = gap_cpu(trace, 100 * US, 200 * US)
    names = [(trace.slice_name(row), ns) for row, ns in found.calls]
    # Not the step (it holds every gap), not the annotation around the frame, not aten::mul.
    assert names == [
        ("threading.py(359): wait", 100 * US),
        ("dataloader.py(703): __next__", 97 * US),
    ]
    assert found.dataloader_ns == 98 * US  # the annotation [98, 198) and the frame, merged


def test_the_gap_details_name_the_dataloader_and_each_threads_call(tmp_path):
    trace = _trace(tmp_path)
    gaps = idle_gaps(trace)
    (k,) = [i for i in range(len(gaps.start)) if gaps.whole_device[i] and gaps.start[i] == 100 * US]
    details = gap_details(trace, gaps, k)
    said = [(label, text) for label, text in details if label in ("DataLoader", "CPU in")]
    assert said == [
        ("DataLoader", "covers 98 us (98%)"),
        # K2's launching thread first, then the others by how much of the gap they cover.
        ("CPU in", "dataloader.py(703): __next__ on thread 1 covers 97 us (97%) of it"),
        ("CPU in", "threading.py(359): wait on thread 2 covers 100 us (100%) of it"),
    ]
