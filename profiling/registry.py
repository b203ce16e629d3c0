"""The workloads by name. Modules are imported only when a workload runs, so that listing them
needs no torch."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class WorkloadInfo:
    """A workload's name, what it shows, and the module that builds it."""

    name: str
    summary: str
    module: str
    default_size: int

    def load(self) -> ModuleType:
        """The module, which has `build(device, size) -> step` (needs torch)."""
        return importlib.import_module(self.module)


WORKLOADS: dict[str, WorkloadInfo] = {
    w.name: w
    for w in (
        WorkloadInfo(
            "matmul",
            "x @ w + b on NxN matrices: overhead-bound when small, compute-bound when large",
            "profiling.workloads.matmul",
            64,
        ),
        WorkloadInfo(
            "linear", "one nn.Linear forward on a batch of 64", "profiling.workloads.linear", 512
        ),
        WorkloadInfo(
            "mlp",
            "a Linear+GELU stack: forward, backward and an SGD step",
            "profiling.workloads.mlp",
            256,
        ),
        WorkloadInfo(
            "transformer",
            "a small decoder-only transformer: prefill, then decode with a KV cache",
            "profiling.workloads.transformer",
            128,
        ),
    )
}

# `--size pair` for matmul: the guide's two ends, overhead-bound and compute-bound.
PAIR_SIZES = (64, 4096)
