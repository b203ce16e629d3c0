"""One nn.Linear(size, size) forward on a batch of 64 rows: aten::linear -> aten::addmm."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

BATCH = 64


def build(device: torch.device, size: int) -> Callable[[], torch.Tensor]:
    torch.manual_seed(0)
    layer = nn.Linear(size, size).to(device)
    x = torch.randn(BATCH, size, device=device)

    def step() -> torch.Tensor:
        with torch.no_grad():
            out: torch.Tensor = layer(x)
        return out

    return step
