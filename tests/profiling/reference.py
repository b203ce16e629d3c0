"""Our tables against the rows of torch's own `key_averages()` for the same run: the op table
row by row (calls exactly, each time within a nanosecond or two per call or per piece of GPU
work: the trace keeps times to the nanosecond), the kernel table for torch's rows of GPU work
alone (kernels, copies), and the GPU lanes' annotations for the second row torch prints for a
`record_function` on a GPU run (its name again, no CPU time, the span it covered on the GPU).

Python frames (`with_stack=True`): torch 2.13 lists them as rows, so they are children of the
ops they call and not part of their Self CPU, as in our table. torch 2.11 (seen on an H200)
leaves them out of `key_averages()`, so its Self CPU of an op that calls Python includes that
Python's time; against such a table, Self CPU is not compared (calls, CPU total and the CUDA
columns still are)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from tui.model.analysis.kernels import kernel_stats
from tui.model.analysis.ops import op_stats
from tui.model.present.rows import GPU_ANNOTATION_CATEGORY
from tui.model.trace import Trace

# A nanosecond a call, in torch's microseconds: the trace keeps times to the nanosecond (the
# samples differ by none); Kineto's GPU annotation spans come out 2 ns longer than torch's.
_NS = 1e-3
_SPAN_NS = 3e-3


def _close(ours_ns: float, theirs_us: float, calls: int, per_call: float = _NS) -> bool:
    return math.isclose(ours_ns / 1e3, theirs_us, rel_tol=1e-12, abs_tol=per_call * max(calls, 1))


def _annotations(trace: Trace) -> tuple[Counter[str], Counter[str]]:
    """The GPU lanes' record_function spans: how many of each name, and their total ns."""
    rows = np.flatnonzero(
        trace.category_test(lambda c: c == GPU_ANNOTATION_CATEGORY)[trace.slices.cat]
    )
    calls: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for r in rows.tolist():
        name = trace.slice_name(r)
        calls[name] += 1
        total[name] += int(trace.slices.dur[r])
    return calls, total


def differences(trace: Trace, rows: list[dict[str, Any]]) -> list[str]:
    """What differs, one line each (empty: the tables agree)."""
    ops = {op.name: op for op in op_stats(trace)}
    kernels = {k.name: k for k in kernel_stats(trace)}
    spans, span_ns = _annotations(trace)
    frames = {name for name, op in ops.items() if op.python}
    frames_listed = any(row["name"] in frames for row in rows)
    self_cpu_comparable = frames_listed or not frames
    out, seen = [], set()
    for row in rows:
        name, calls = row["name"], row["calls"]
        if row["self_cpu_us"] == 0 and row["cpu_total_us"] == 0:
            if name in ops and spans[name]:  # the GPU side of a record_function
                total = row["device_total_us"]
                if spans[name] != calls or not _close(span_ns[name], total, calls, _SPAN_NS):
                    out.append(f"{name}: GPU spans {spans[name]} x {span_ns[name]} ns; torch {row}")
                continue
            if name not in ops:
                kernel = kernels.get(name)
                if kernel is None:
                    out.append(f"{name}: GPU work torch counts, not in the kernel table")
                elif kernel.calls != calls or not _close(
                    kernel.total_ns, row["device_total_us"], calls
                ):
                    out.append(f"{name}: kernel {kernel.calls} x {kernel.total_ns} ns; torch {row}")
                continue
        seen.add(name)
        mine = ops.get(name)
        if mine is None:
            out.append(f"{name}: in torch's table, not in ours")
            continue
        checks = [
            mine.calls == calls,
            _close(mine.cpu_total_ns, row["cpu_total_us"], calls),
            _close(mine.self_cuda_ns, row["self_device_us"], calls),
            _close(mine.cuda_total_ns, row["device_total_us"], calls),
        ]
        if self_cpu_comparable:
            checks.append(_close(mine.self_cpu_ns, row["self_cpu_us"], calls))
        if not all(checks):
            ours = (mine.calls, mine.self_cpu_ns, mine.cpu_total_ns)
            ours += (mine.self_cuda_ns, mine.cuda_total_ns)
            out.append(f"{name}: ours (calls, self CPU, CPU, self CUDA, CUDA ns) {ours}; {row}")
    unlisted = set(ops) - seen
    if not frames_listed:
        unlisted -= frames
    out += [f"{name}: in our table, not in torch's" for name in sorted(unlisted)]
    named = {row["name"] for row in rows}
    out += [f"{name}: in our kernel table, not in torch's" for name in sorted(set(kernels) - named)]
    out += [f"{name}: a GPU span torch does not count" for name in sorted(set(spans) - named)]
    return out
