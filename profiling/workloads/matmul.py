"""x @ w + b on NxN float32 matrices.

The guide's first experiment: at N=64 each step is a few microseconds of GPU work behind tens of
microseconds of CPU-side dispatch and kernel launch, so the GPU sits idle (overhead-bound); at
N=4096 the kernels run for milliseconds and the GPU is busy (compute-bound).
"""

from __future__ import annotations

from collections.abc import Callable

import torch


def build(device: torch.device, size: int) -> Callable[[], torch.Tensor]:
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(size, size, generator=gen).to(device)
    w = torch.randn(size, size, generator=gen).to(device)
    b = torch.randn(size, generator=gen).to(device)

    def step() -> torch.Tensor:
        return x @ w + b

    return step
