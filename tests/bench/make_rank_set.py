"""A rank set with a known straggler and a known slow step, one Kineto-shaped trace per rank.

Every rank runs `steps` ProfilerStep#N: a GEMM kernel (COMPUTE_US), then an all-reduce whose
kernel starts when the rank's GEMM ends and ends, on every rank, TRANSFER_US after the last
rank's GEMM: the early ranks wait in it. In step `slow_step` the GEMM of rank `slow_rank` takes
DELAY_US longer, so there it arrives last and every other rank waits DELAY_US. The CPU side
synchronises after the all-reduce, so all ranks' steps end together. The clock is shared
(epoch microseconds), as on one node.

    python3 tests/bench/make_rank_set.py OUT_FOLDER [--ranks 8] [--steps 4] [--filler N]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EPOCH_US = 1_700_000_000_000_000
COMPUTE_US = 6000
TRANSFER_US = 1000
DELAY_US = 4000
LEAD_US = 100  # from the step's start to its GEMM
SYNC_US = 50  # from the all-reduce's end to the step's end
NELEMS = 1 << 20  # float32: 4 MiB


@dataclass(frozen=True)
class Expected:
    """The answers the rank table must find."""

    straggler: int
    slow_step: str
    step_us: list[int]  # every rank's CPU time of each step
    wait_us: dict[int, int]  # each rank's wait in collectives, summed


def write_rank_set(
    folder: Path,
    ranks: int = 4,
    steps: int = 3,
    slow_rank: int = 2,
    slow_step: int = 1,
    filler: int = 0,
    compute_us: int = COMPUTE_US,
) -> Expected:
    """`filler`: small CPU ops per step, before its GEMM, to make the traces as big as wanted;
    `compute_us`: every GEMM's time (a slower run of the same job)."""
    folder.mkdir(parents=True, exist_ok=True)
    step_us = [
        LEAD_US + compute_us + (DELAY_US if k == slow_step else 0) + TRANSFER_US + SYNC_US
        for k in range(steps)
    ]
    for rank in range(ranks):
        events: list[dict[str, Any]] = [
            _meta("process_name", 1, 0, name="python3"),
            _meta("thread_name", 1, 1, name="thread 1 (python3)"),
            _meta("process_name", 0, 0, name="python3"),
            _meta("process_labels", 0, 0, labels="GPU 0"),
            _meta("thread_name", 0, 7, name="stream 7"),
        ]
        t = EPOCH_US
        for k in range(steps):
            delay = DELAY_US if (k == slow_step and rank == slow_rank) else 0
            latest = t + LEAD_US + compute_us + (DELAY_US if k == slow_step else 0)
            gemm_start = t + LEAD_US
            gemm_end = gemm_start + compute_us + delay
            reduce_end = latest + TRANSFER_US
            correlation = 2 * k + 1
            events += [
                _x("cpu_op", f"ProfilerStep#{k}", 1, 1, t, step_us[k]),
                _x("cpu_op", "aten::mm", 1, 1, t + 10, 30),
                _x("cuda_runtime", "cudaLaunchKernel", 1, 1, t + 20, 10, correlation=correlation),
                _x(
                    "kernel",
                    "gemm",
                    0,
                    7,
                    gemm_start,
                    gemm_end - gemm_start,
                    correlation=correlation,
                ),
                _x("cpu_op", "c10d::allreduce_", 1, 1, t + 50, 40),
                _x("cpu_op", "record_param_comms", 1, 1, t + 55, 30, **_comms(ranks)),
                _x(
                    "cuda_runtime",
                    "cudaLaunchKernel",
                    1,
                    1,
                    t + 60,
                    10,
                    correlation=correlation + 1,
                ),
                _x(
                    "kernel",
                    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                    0,
                    7,
                    gemm_end,
                    reduce_end - gemm_end,
                    correlation=correlation + 1,
                ),
                _x("cuda_runtime", "cudaStreamSynchronize", 1, 1, t + 100, reduce_end - t - 100),
            ]
            events += [
                _x("cpu_op", "aten::view", 1, 1, t + LEAD_US + i * compute_us // (filler + 1), 1)
                for i in range(filler)
            ]
            t += step_us[k]
        doc = {
            "schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": ranks},
            "traceEvents": events,
        }
        (folder / f"rank{rank}.pt.trace.json").write_text(json.dumps(doc))
    waits = {r: 0 if r == slow_rank else DELAY_US for r in range(ranks)}
    return Expected(slow_rank, f"ProfilerStep#{slow_step}", step_us, waits)


def _comms(ranks: int) -> dict[str, Any]:
    return {
        "Collective name": "allreduce",
        "Process Group Name": "0",
        "Group size": ranks,
        "In msg nelems": NELEMS,
        "Out msg nelems": NELEMS,
        "dtype": "Float",
    }


def _x(cat: str, name: str, pid: int, tid: int, ts: int, dur: int, **args: Any) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def _meta(kind: str, pid: int, tid: int, **args: Any) -> dict[str, Any]:
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": args}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--slow-rank", type=int, help="default: 5, or the last rank of fewer")
    parser.add_argument("--slow-step", type=int, default=2)
    parser.add_argument("--filler", type=int, default=0, help="small CPU ops per step")
    opts = parser.parse_args()
    if opts.slow_rank is None:
        opts.slow_rank = min(5, opts.ranks - 1)
    if not 0 <= opts.slow_rank < opts.ranks or not 0 <= opts.slow_step < opts.steps:
        parser.error("--slow-rank and --slow-step must be one of the ranks and steps")
    found = write_rank_set(
        opts.out, opts.ranks, opts.steps, opts.slow_rank, opts.slow_step, opts.filler
    )
    print(f"{opts.out}: {opts.ranks} ranks; straggler rank {found.straggler} in {found.slow_step}")
