"""Run one workload under torch.profiler and export its Chrome trace."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from .destination import ProfilingError, check_writable
from .registry import WORKLOADS


@dataclass(frozen=True)
class OpTotals:
    """One row of `key_averages()`, times in microseconds as torch reports them."""

    name: str
    calls: int
    self_cpu_us: float
    cpu_total_us: float
    self_device_us: float
    device_total_us: float
    cpu_mem: int = 0  # bytes allocated less freed, as key_averages() counts them
    self_cpu_mem: int = 0
    device_mem: int = 0
    self_device_mem: int = 0


@dataclass(frozen=True)
class Result:
    """Where the trace went and what the profiler itself said of the run."""

    path: Path
    device: str
    workload: str
    size: int
    active_steps: int
    table: str  # key_averages().table(), sorted as asked
    ops: list[OpTotals]  # every key_averages() row
    torch_version: str


def pick_device(device: str) -> torch.device:
    """`auto` is CUDA when present, else the CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ProfilingError(
            "--device cuda: no CUDA device is available (torch "
            f"{torch.__version__}, built {'with' if torch.version.cuda else 'without'} CUDA)"
        )
    if device not in ("cpu", "cuda"):
        raise ProfilingError(f"unknown device {device!r}; use auto, cpu or cuda")
    return torch.device(device)


def profile_workload(
    name: str,
    out_path: str | os.PathLike[str],
    *,
    device: str = "auto",
    steps: int = 3,
    size: int | None = None,
    wait: int = 1,
    warmup: int = 1,
    record_shapes: bool = False,
    profile_memory: bool = False,
    with_stack: bool = False,
    sort_by: str | None = None,
    row_limit: int = 25,
) -> Result:
    """Profile `steps` active steps of workload `name`, after `wait` skipped and `warmup` warm-up
    steps, and write the Chrome trace to `out_path` (gzip when it ends in `.gz`).

    The trace appears at `out_path` only once it is complete: it is written to a temporary file
    beside it and renamed.

    Raises:
        ProfilingError: unknown workload, no CUDA when asked for, or the output cannot be written.
    """
    info = WORKLOADS.get(name)
    if info is None:
        raise ProfilingError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
    if steps < 1 or warmup < 1 or wait < 0:
        raise ProfilingError("need steps >= 1, warmup >= 1 and wait >= 0")
    dev = pick_device(device)
    size = size or info.default_size
    out = Path(out_path)
    check_writable(out)
    step = info.load().build(dev, size)
    on_cuda = dev.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_cuda else [])
    sort_by = sort_by or ("cuda_time_total" if on_cuda else "cpu_time_total")
    fd, tmp_name = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=_suffix(out))
    os.close(fd)
    tables: list[tuple[str, list[OpTotals]]] = []

    def ready(prof: profile) -> None:
        prof.export_chrome_trace(tmp_name)
        averages = prof.key_averages()
        tables.append(
            (averages.table(sort_by=sort_by, row_limit=row_limit), [op_totals(a) for a in averages])
        )

    try:
        with profile(
            activities=activities,
            schedule=schedule(wait=wait, warmup=warmup, active=steps, repeat=1),
            on_trace_ready=ready,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
        ) as prof:
            for _ in range(wait + warmup + steps):
                with record_function(name):
                    step()
                if on_cuda:
                    # Kernels run asynchronously: wait for them so each step's GPU work is
                    # recorded inside the step that launched it.
                    torch.cuda.synchronize(dev)
                prof.step()
        if not tables:
            raise ProfilingError("the profiler produced no trace")
        os.chmod(tmp_name, 0o666 & ~_umask())  # mkstemp made it private; a trace is not
        os.replace(tmp_name, out)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    table, ops = tables[-1]
    return Result(out, str(dev), name, size, steps, table, ops, torch.__version__)


def key_averages_path(trace: Path) -> Path:
    """Where `write_key_averages` puts a trace's rows: beside it, named after it."""
    return trace.with_name(
        f"{trace.name.removesuffix('.gz').removesuffix('.json')}.key_averages.json"
    )


def write_key_averages(result: Result) -> Path:
    """torch's key_averages() rows of the run, with its device and versions, as JSON beside the
    trace (times in microseconds, as torch reports them)."""
    out = key_averages_path(result.path)
    doc = {
        "trace": result.path.name,
        "workload": result.workload,
        "size": result.size,
        "device": result.device,
        "device_name": torch.cuda.get_device_name(result.device) if result.device != "cpu" else "",
        "torch": result.torch_version,
        "cuda": torch.version.cuda or "",
        "ops": [asdict(op) for op in result.ops],
    }
    partial = out.with_name(f".{out.name}.partial")  # whole or not at all, as the trace
    partial.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(partial, out)
    return out


def op_totals(avg: object) -> OpTotals:
    """One key_averages() row (a FunctionEventAvg), in the form the reference tests compare."""

    def get(*names: str) -> float:
        for n in names:  # torch renamed cuda_* to device_* in 2.4
            if hasattr(avg, n):
                return float(getattr(avg, n))
        return 0.0

    return OpTotals(
        str(getattr(avg, "key", "")),
        int(getattr(avg, "count", 0)),
        get("self_cpu_time_total"),
        get("cpu_time_total"),
        get("self_device_time_total", "self_cuda_time_total"),
        get("device_time_total", "cuda_time_total"),
        int(get("cpu_memory_usage")),
        int(get("self_cpu_memory_usage")),
        int(get("device_memory_usage", "cuda_memory_usage")),
        int(get("self_device_memory_usage", "self_cuda_memory_usage")),
    )


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _suffix(out: Path) -> str:
    # torch gzips when the name ends in .gz; keep the temporary file's name telling it the same.
    return ".json.gz" if out.name.endswith(".gz") else ".json"
