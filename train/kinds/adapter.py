"""The trainer's side of the test-only `adapter` kind (tests/kinds/adapter_kind.cpp): llama
whose every layer, after its FFN, adds x += adapter_up(adapter_down(x)), a rank-R adapter
(R: adapter_rank)."""
from __future__ import annotations

import torch
from torch import nn

from ..model import ModelArgs, Transformer

ARCHITECTURE = "adapter"


class AdapterModel(Transformer):
    def __init__(self, a: ModelArgs, rank: int):
        super().__init__(a)
        self.rank = rank
        self.down = nn.ModuleList(nn.Linear(a.dim, rank, bias=False) for _ in range(a.n_layers))
        self.up = nn.ModuleList(nn.Linear(rank, a.dim, bias=False) for _ in range(a.n_layers))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens int64 [B, T] at positions 0..T-1 -> logits float32 [B, T, V]."""
        t = tokens.shape[1]
        mask = torch.full((t, t), float("-inf")).triu(1)
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        x = self.tok_embeddings(tokens)
        for layer, down, up in zip(self.layers, self.down, self.up):
            x = layer(x, cos, sin, mask)
            x = x + up(down(x))
        return self.output(self.norm(x))

    def role_tensors(self) -> dict:
        out = super().role_tensors()
        out["adapter_down"] = [m.weight for m in self.down]
        out["adapter_up"] = [m.weight for m in self.up]
        return out

    def config_fields(self) -> dict:
        return {**super().config_fields(), "adapter_rank": self.rank}


def random_model(vocab_size: int, seed: int) -> AdapterModel:
    """dim 64, 2 layers, 4 heads (2 kv), hidden 96, rank 8; matrices N(0, 1) * 1.5 / sqrt(columns)
    (logits well apart), norms 1 + U(-1/4, 1/4)."""
    model = AdapterModel(ModelArgs(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=vocab_size,
                                   hidden_dim=96, seq_len=128), rank=8)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            if p.dim() == 1:
                p.copy_(1 + (torch.rand(p.shape, generator=g) - 0.5) / 2)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * (1.5 / p.shape[1] ** 0.5))
    model.eval()
    return model
