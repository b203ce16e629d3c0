"""A stack of Linear+GELU layers trained for one step: forward, loss, backward, SGD update.

The backward pass runs on autograd's thread on CUDA, so the trace shows forward/backward flows
(`fwdbwd`) between the ops and their gradients.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.profiler import record_function

BATCH = 64
LAYERS = 3


def build(device: torch.device, size: int) -> Callable[[], torch.Tensor]:
    torch.manual_seed(0)
    blocks: list[nn.Module] = []
    for _ in range(LAYERS):
        blocks += [nn.Linear(size, size), nn.GELU()]
    model = nn.Sequential(*blocks, nn.Linear(size, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(BATCH, size, device=device)
    y = torch.randn(BATCH, 1, device=device)

    def step() -> torch.Tensor:
        with record_function("forward"):
            loss = nn.functional.mse_loss(model(x), y)
        with record_function("backward"):
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("optimizer_step"):
            optimizer.step()
        return loss.detach()

    return step
