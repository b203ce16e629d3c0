"""A hand-made with_stack trace: GPU work under 40 levels of Python frames, as real ones are.

pid 1 thread 1 runs `depth` nested Python frames around everything; each of `steps`
ProfilerStep#N annotations (100 us apart) holds 3 module calls, each 6 Python frames deep over
aten::linear > aten::addmm > cudaLaunchKernel, whose kernel runs on pid 0 stream 7 under a
gpu_user_annotation. Kineto's metadata comes too: sort indexes that put GPU 0 after the host,
a "Spans" process, and a "Buffer Flush" thread sorted first in its process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STEP_US = 100
CALLS = 3
FRAMES = 6


def deep_stack_events(depth: int = 40, steps: int = 3) -> list[dict[str, Any]]:
    span = steps * STEP_US + 2 * depth
    out: list[dict[str, Any]] = [
        _meta("process_name", 1, 0, name="python3"),
        _meta("process_labels", 1, 0, labels="CPU"),
        _meta("process_sort_index", 1, 0, sort_index=1),
        _meta("process_name", 0, 0, name="python3"),
        _meta("process_labels", 0, 0, labels="GPU 0"),
        _meta("process_sort_index", 0, 0, sort_index=5000000),
        _meta("thread_name", 1, 1, name="thread 1 (python3)"),
        _meta("thread_sort_index", 1, 1, sort_index=1),
        _meta("thread_name", 1, 99, name="Buffer Flush"),
        _meta("thread_sort_index", 1, 99, sort_index=0),
        _meta("thread_name", 0, 7, name="stream 7 "),
        _meta("thread_sort_index", 0, 7, sort_index=7),
        _meta("process_sort_index", "Spans", 0, sort_index=536870912),
        _x("PyTorch Profiler (0)", "Trace", "Spans", "PyTorch Profiler", 0, span),
        _x("flush", "overhead", 1, 99, 1, 2),
        _x("flush", "overhead", 1, 99, 3, 1),
    ]
    for d in range(depth):
        out.append(_x(f"frames.py({d}): level_{d}", "python_function", 1, 1, d, span - 2 * d))
    correlation = 1
    for step in range(steps):
        t = depth + step * STEP_US
        out.append(_x(f"ProfilerStep#{step + 1}", "user_annotation", 1, 1, t, STEP_US - 1))
        out.append(_x(f"ProfilerStep#{step + 1}", "gpu_user_annotation", 0, 7, t + 5, STEP_US - 6))
        for call in range(CALLS):
            c = t + 1 + call * 30
            for f in range(FRAMES):
                out.append(
                    _x(f"model.py({f}): forward", "python_function", 1, 1, c + f, 28 - 2 * f)
                )
            op = c + FRAMES
            out.append(_x("aten::linear", "cpu_op", 1, 1, op, 14))
            out.append(_x("aten::addmm", "cpu_op", 1, 1, op + 1, 12))
            launch = _x("cudaLaunchKernel", "cuda_runtime", 1, 1, op + 2, 4)
            launch["args"] = {"correlation": correlation}
            kernel = _x(f"gemm_{call}", "kernel", 0, 7, op + 10, 8)
            kernel["args"] = {"correlation": correlation, "stream": 7}
            out += [launch, kernel]
            correlation += 1
    return out


def write_deep_stack(path: Path, depth: int = 40, steps: int = 3) -> Path:
    path.write_text(json.dumps({"traceEvents": deep_stack_events(depth, steps)}))
    return path


def _x(name: str, cat: str, pid: Any, tid: Any, ts: float, dur: float) -> dict[str, Any]:
    return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def _meta(event: str, pid: Any, tid: Any, **args: Any) -> dict[str, Any]:
    return {"ph": "M", "name": event, "pid": pid, "tid": tid, "args": args}
