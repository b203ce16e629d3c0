"""`trace-profile`: run a workload under torch.profiler and write its Chrome trace."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .destination import ProfilingError, check_writable
from .registry import PAIR_SIZES, WORKLOADS

PROG = "trace-profile"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Profile a PyTorch workload and export a Chrome trace that trace-tui opens.",
    )
    p.add_argument("workload", nargs="?", help="one of: " + ", ".join(WORKLOADS))
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument(
        "--size",
        help="problem size N (matmul: NxN); 'pair' runs matmul at "
        f"{PAIR_SIZES[0]} and {PAIR_SIZES[1]}; several sizes may be given as 64,1024",
    )
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--steps", type=int, default=3, help="active (recorded) steps")
    p.add_argument("--warmup", type=int, default=1, help="warm-up steps before recording")
    p.add_argument(
        "--out",
        help="trace path (.json or .json.gz), or a folder (an existing one, or a path ending "
        "in /) for the traces under their default names; default "
        "WORKLOAD_SIZE_DEVICE.pt.trace.json.gz here",
    )
    p.add_argument("--table", action="store_true", help="print the key_averages table")
    p.add_argument(
        "--sort",
        help="table sort key, e.g. cuda_time_total, cpu_time_total, "
        "self_cpu_time_total (default: CUDA time on a GPU, else CPU time)",
    )
    p.add_argument("--record-shapes", action="store_true")
    p.add_argument("--profile-memory", action="store_true")
    p.add_argument("--with-stack", action="store_true")
    p.add_argument(
        "--key-averages",
        action="store_true",
        help="also write torch's key_averages() rows as JSON beside each trace "
        "(TRACE.key_averages.json): the reference the viewer's op table is checked against",
    )
    p.add_argument("--view", action="store_true", help="open the trace in trace-tui afterwards")
    return p


def _fail(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return 2


def _sizes(text: str | None, workload: str) -> list[int | None]:
    if text is None:
        return [None]
    if text == "pair":
        if workload != "matmul":
            raise ValueError("--size pair is for matmul")
        return list(PAIR_SIZES)
    sizes = [int(part) for part in text.split(",")]
    if any(s < 1 for s in sizes):
        raise ValueError("sizes must be positive")
    return list(sizes)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        opts = _parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if opts.list:
        width = max(len(n) for n in WORKLOADS)
        for info in WORKLOADS.values():
            print(f"{info.name:<{width}}  {info.summary}")
        return 0
    if opts.workload is None:
        return _fail("name a workload (see --list)")
    if opts.workload not in WORKLOADS:
        return _fail(f"unknown workload {opts.workload!r}; known: {', '.join(WORKLOADS)}")
    try:
        sizes = _sizes(opts.size, opts.workload)
    except ValueError as e:
        return _fail(f"--size: {e}" if "size" not in str(e) else str(e))
    folder = None
    if opts.out and (opts.out.endswith(("/", os.sep)) or os.path.isdir(opts.out)):
        folder, opts.out = opts.out, None
    if opts.out and len(sizes) > 1:
        return _fail(
            "--out names one file; with several sizes, name a folder (--out prof/): traces are "
            "named by size"
        )
    try:
        if opts.out:
            check_writable(Path(opts.out))
    except ProfilingError as e:
        return _fail(str(e))
    try:
        from .export import profile_workload, write_key_averages
    except ImportError:
        return _fail(
            "torch is not installed; install the profiling extra: "
            "pip install 'trace-tui[profiling]'"
        )
    written: list[str] = []
    devices: set[str] = set()
    for size in sizes:
        info = WORKLOADS[opts.workload]
        out = opts.out or (
            f"{opts.workload}_{size or info.default_size}_"
            f"{_device_word(opts.device)}.pt.trace.json.gz"
        )
        if folder is not None:
            os.makedirs(folder, exist_ok=True)
            out = os.path.join(folder, out)
        try:
            result = profile_workload(
                opts.workload,
                out,
                device=opts.device,
                steps=opts.steps,
                size=size,
                warmup=opts.warmup,
                record_shapes=opts.record_shapes,
                profile_memory=opts.profile_memory,
                with_stack=opts.with_stack,
                sort_by=opts.sort,
            )
        except ProfilingError as e:
            return _fail(str(e))
        except OSError as e:
            return _fail(f"{out}: cannot write the trace: {e.strerror or e}")
        print(
            f"{result.path}: {result.workload} size {result.size} on {result.device}, "
            f"{result.active_steps} active steps (torch {result.torch_version})"
        )
        if opts.table:
            print(result.table)
        if opts.key_averages:
            print(f"{write_key_averages(result)}: torch's key_averages() rows")
        written.append(str(result.path))
        devices.add(str(result.device))
    if opts.size == "pair" and devices == {"cpu"}:
        why = "--device cpu" if opts.device == "cpu" else "no CUDA device was found"
        print(
            f"{PROG}: both ran on the CPU ({why}), so both traces show no GPU activity; the "
            "pair's contrast (overhead-bound at 64, compute-bound at 4096) needs a GPU: "
            "--device cuda",
            file=sys.stderr,
        )
    if opts.view:
        # The two halves meet only through the file: the viewer runs as its own process, through
        # its documented entry point (`python -m tui`). A pair opens as BASE and NEW.
        shown = written[-2:] if opts.size == "pair" else written[-1:]
        return subprocess.call([sys.executable, "-m", "tui", *shown])
    return 0


def _device_word(device: str) -> str:
    if device != "auto":
        return device
    from .export import pick_device

    return str(pick_device("auto").type)
