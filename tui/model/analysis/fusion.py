"""Fusion candidates: runs of two or more elementwise, reduction or normalisation kernels one
after another on a stream, each a pass over memory that a fused kernel (torch.compile) makes
once. A run could save its time above one pass, taken as its longest kernel."""

from __future__ import annotations

import msgspec
import numpy as np

from ..patterns import FUSABLE_KERNEL
from ..trace import Trace
from .attribution import attribute


class FusionRuns(msgspec.Struct, frozen=True):
    runs: int
    kernels: int  # in the runs
    gpu_ns: int  # their time
    saving_ns: int  # their time above one pass (the longest kernel) per run
    first: int  # slice row of the first kernel of the run that could save most (-1: none)
    longest_run: int  # kernels in the longest run


def fusion_runs(trace: Trace, t0: int, t1: int) -> FusionRuns:
    """The runs among the GPU work that started in [t0, t1)."""
    s = trace.slices
    work = attribute(trace).work
    work = work[(s.start[work] >= t0) & (s.start[work] < t1)]
    lane = trace.lane_indices(work)
    order = np.lexsort((s.start[work], lane))
    work, lane = work[order], lane[order]
    fusable = trace.name_test(FUSABLE_KERNEL.search, s.name[work])[s.name[work]]
    after_one = np.concatenate(([False], fusable[:-1] & (lane[1:] == lane[:-1])))
    run = np.cumsum(fusable & ~after_one) - 1  # per fusable kernel, its run
    rows, run = work[fusable], run[fusable]
    if not len(rows):
        return FusionRuns(0, 0, 0, 0, -1, 0)
    size = np.bincount(run)
    starts = np.flatnonzero(np.concatenate(([True], run[1:] != run[:-1])))
    dur = s.dur[rows]
    total = np.add.reduceat(dur, starts)
    saving = total - np.maximum.reduceat(dur, starts)
    real = size >= 2
    if not real.any():
        return FusionRuns(0, 0, 0, 0, -1, 0)
    best = int(np.argmax(np.where(real, saving, -1)))
    return FusionRuns(
        int(real.sum()),
        int(size[real].sum()),
        int(total[real].sum()),
        int(saving[real].sum()),
        int(rows[starts[best]]),
        int(size.max()),
    )
