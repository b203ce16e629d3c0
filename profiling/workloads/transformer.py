"""A small decoder-only transformer in plain torch, random weights: prefill, then decode.

Each step prefills a 16-token prompt and then generates 8 tokens one at a time with a KV cache,
the shape of LLM inference: one large batch of matrix work, then many tiny launches per token,
which makes decode overhead-bound on any GPU.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F
from torch.profiler import record_function

VOCAB = 1000
HEADS = 4
LAYERS = 2
PROMPT = 16
NEW_TOKENS = 8


class Block(nn.Module):
    """Pre-norm attention and MLP; attention keeps its keys and values for decoding."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(
        self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor] | None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, HEADS, d // HEADS).transpose(1, 2) for z in (q, k, v))
        if cache is not None:
            k = torch.cat((cache[0], k), dim=2)
            v = torch.cat((cache[1], v), dim=2)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        x = x + self.mlp(self.norm2(x))
        return x, (k, v)


class Decoder(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.pos = nn.Embedding(PROMPT + NEW_TOKENS, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(LAYERS))
        self.head = nn.Linear(dim, VOCAB)

    def forward(
        self,
        tokens: torch.Tensor,
        start: int,
        caches: list[tuple[torch.Tensor, torch.Tensor]] | None,
    ) -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
        positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        x = self.embed(tokens) + self.pos(positions)
        new_caches = []
        for i, block in enumerate(self.blocks):
            x, cache = block(x, caches[i] if caches is not None else None)
            new_caches.append(cache)
        return self.head(x[:, -1]), new_caches


def build(device: torch.device, size: int) -> Callable[[], torch.Tensor]:
    torch.manual_seed(0)
    model = Decoder(size).to(device).eval()
    prompt = torch.randint(0, VOCAB, (1, PROMPT), device=device)

    def step() -> torch.Tensor:
        with torch.no_grad():
            with record_function("prefill"):
                logits, caches = model(prompt, 0, None)
            token = logits.argmax(-1, keepdim=True)
            out = [token]
            for i in range(NEW_TOKENS - 1):
                with record_function("decode_token"):
                    logits, caches = model(token, PROMPT + i, caches)
                    token = logits.argmax(-1, keepdim=True)
                out.append(token)
            return torch.cat(out, dim=1)

    return step
