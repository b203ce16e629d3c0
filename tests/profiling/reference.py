"""Our tables against the rows of torch's own `key_averages()` for the same run: the op table
row by row (calls exactly, each time within a nanosecond per call or per piece of GPU work), and
the kernel table for torch's rows of GPU work alone (kernels, copies: no CPU time)."""

from __future__ import annotations

import math
from typing import Any

from tui.model.analysis.kernels import kernel_stats
from tui.model.analysis.ops import op_stats
from tui.model.trace import Trace

_US = 1e-3  # a nanosecond, in torch's microseconds


def _close(ours_ns: float, theirs_us: float, pieces: int) -> bool:
    return math.isclose(ours_ns / 1e3, theirs_us, rel_tol=1e-9, abs_tol=_US * max(pieces, 1) + 1e-6)


def differences(trace: Trace, rows: list[dict[str, Any]]) -> list[str]:
    """What differs, one line each (empty: the tables agree)."""
    ops = {op.name: op for op in op_stats(trace)}
    kernels = {k.name: k for k in kernel_stats(trace)}
    out, seen = [], set()
    for row in rows:
        name, calls = row["name"], row["calls"]
        if row["self_cpu_us"] == 0 and row["cpu_total_us"] == 0 and name not in ops:
            kernel = kernels.get(name)
            if kernel is None:
                out.append(f"{name}: GPU work torch counts, not in the kernel table")
            elif kernel.calls != calls or not _close(
                kernel.total_ns, row["device_total_us"], calls
            ):
                out.append(
                    f"{name}: kernel {kernel.calls} x, {kernel.total_ns} ns; torch {calls} x, "
                    f"{row['device_total_us']} us"
                )
            continue
        seen.add(name)
        mine = ops.get(name)
        if mine is None:
            out.append(f"{name}: in torch's table, not in ours")
            continue
        ours = (
            mine.calls,
            mine.self_cpu_ns,
            mine.cpu_total_ns,
            mine.self_cuda_ns,
            mine.cuda_total_ns,
        )
        theirs = (calls, row["self_cpu_us"], row["cpu_total_us"], row["self_device_us"])
        theirs += (row["device_total_us"],)
        kernels_under = max(1, round(row["device_total_us"]))  # a bound on its pieces of GPU work
        agree = ours[0] == calls and all(
            _close(o, t, calls if i < 3 else kernels_under)
            for i, (o, t) in enumerate(zip(ours[1:], theirs[1:], strict=True), 1)
        )
        if not agree:
            out.append(
                f"{name}: ours (calls, self CPU, CPU, self CUDA, CUDA ns) {ours}; torch {theirs}"
            )
    out += [f"{name}: in our table, not in torch's" for name in sorted(set(ops) - seen)]
    return out
