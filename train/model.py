"""The llama2.c Llama network in PyTorch, computing what pocketlm (and llama2.c's run.c)
compute: RMSNorm (eps 1e-5), RoPE on interleaved pairs (2i, 2i+1) with
freq_i = 1 / 10000^(2i / head_size) per head, grouped-query attention (query head h reads
kv head h // (n_heads / n_kv_heads)), SwiGLU feed-forward, and a classifier tied to the token
embedding or separate. With per_layer_dim P > 0 it is pocketlm's per-layer-embedding model
(architecture `pocketlm-ple`, docs/ple.md): a per-layer table and projection give each layer an
input of P values, which a GELU-gated projection adds to the residual after the FFN.

Shapes: B batch, T tokens, D dim, H heads, K kv heads, S head_size = D / H, V vocab, L layers,
P per_layer_dim.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelArgs:
    dim: int = 64
    n_layers: int = 5
    n_heads: int = 8
    n_kv_heads: int = 4
    vocab_size: int = 512
    hidden_dim: int = 172
    seq_len: int = 256  # the context: positions 0..seq_len-1 (llama2.c's header seq_len)
    tied: bool = True  # classifier = token embedding
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    per_layer_dim: int = 0  # P of a per-layer-embedding model; 0: llama

    def __post_init__(self):
        if self.dim % self.n_heads or self.n_heads % self.n_kv_heads or (self.dim // self.n_heads) % 2:
            raise ValueError(f"bad shape: dim {self.dim}, n_heads {self.n_heads}, n_kv_heads {self.n_kv_heads}")

    @property
    def head_size(self) -> int:
        return self.dim // self.n_heads

    @property
    def architecture(self) -> str:
        """GGUF general.architecture of this shape."""
        return "pocketlm-ple" if self.per_layer_dim else "llama"

    def to_dict(self) -> dict:
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., D] -> [..., D]
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rope_tables(head_size: int, seq_len: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin [seq_len, head_size / 2]: angle(pos, i) = pos / theta^(2i / head_size)."""
    freqs = 1.0 / (theta ** (torch.arange(0, head_size, 2, dtype=torch.float32) / head_size))
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), freqs)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotates pairs (x[..., 2i], x[..., 2i+1]) of x [B, T, heads, S] by the angles of cos/sin
    [T, S / 2]."""
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    re, im = pairs[..., 0], pairs[..., 1]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((re * c - im * s, re * s + im * c), dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_size = a.n_heads, a.n_kv_heads, a.head_size
        self.wq = nn.Linear(a.dim, a.n_heads * a.head_size, bias=False)
        self.wk = nn.Linear(a.dim, a.n_kv_heads * a.head_size, bias=False)
        self.wv = nn.Linear(a.dim, a.n_kv_heads * a.head_size, bias=False)
        self.wo = nn.Linear(a.n_heads * a.head_size, a.dim, bias=False)

    def forward(self, x, cos, sin, mask):  # x [B, T, D], mask [T, T] additive -> [B, T, D]
        b, t, _ = x.shape
        q = apply_rope(self.wq(x).view(b, t, self.n_heads, self.head_size), cos, sin)
        k = apply_rope(self.wk(x).view(b, t, self.n_kv_heads, self.head_size), cos, sin)
        v = self.wv(x).view(b, t, self.n_kv_heads, self.head_size)
        group = self.n_heads // self.n_kv_heads
        if group > 1:  # query head h reads kv head h // group
            k = k.repeat_interleave(group, dim=2)
            v = v.repeat_interleave(group, dim=2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))  # [B, H, T, S]
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(self.head_size)) + mask
        out = torch.softmax(scores, dim=-1) @ v  # [B, H, T, S]
        return self.wo(out.transpose(1, 2).reshape(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.w1 = nn.Linear(a.dim, a.hidden_dim, bias=False)
        self.w2 = nn.Linear(a.hidden_dim, a.dim, bias=False)
        self.w3 = nn.Linear(a.dim, a.hidden_dim, bias=False)

    def forward(self, x):  # [B, T, D] -> [B, T, D]
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class PerLayerBlock(nn.Module):
    """The per-layer block, on the raw residual: x += rmsnorm(ple_out(gelu(ple_gate(x)) * ple_l))."""

    def __init__(self, a: ModelArgs):
        super().__init__()
        self.gate = nn.Linear(a.dim, a.per_layer_dim, bias=False)
        self.out = nn.Linear(a.per_layer_dim, a.dim, bias=False)
        self.post_norm = RMSNorm(a.dim, a.norm_eps)

    def forward(self, x, ple_l):  # x [B, T, D], ple_l [B, T, P] -> [B, T, D]
        return x + self.post_norm(self.out(F.gelu(self.gate(x)) * ple_l))


class Block(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.attention_norm = RMSNorm(a.dim, a.norm_eps)
        self.attention = Attention(a)
        self.ffn_norm = RMSNorm(a.dim, a.norm_eps)
        self.feed_forward = FeedForward(a)
        self.per_layer = PerLayerBlock(a) if a.per_layer_dim else None

    def forward(self, x, cos, sin, mask, ple_l=None):
        x = x + self.attention(self.attention_norm(x), cos, sin, mask)
        x = x + self.feed_forward(self.ffn_norm(x))
        return self.per_layer(x, ple_l) if self.per_layer is not None else x


def f32(v: float) -> float:
    """v rounded to float32, as a Python float: a constant that multiplies a float32 tensor
    exactly as the engine's float constant does."""
    return float(np.float32(v))


class Transformer(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.args = a
        self.tok_embeddings = nn.Embedding(a.vocab_size, a.dim)
        self.layers = nn.ModuleList(Block(a) for _ in range(a.n_layers))
        self.norm = RMSNorm(a.dim, a.norm_eps)
        self.output = nn.Linear(a.dim, a.vocab_size, bias=False)
        if a.tied:
            self.output.weight = self.tok_embeddings.weight
        if a.per_layer_dim:
            all_layers = a.n_layers * a.per_layer_dim
            self.ple_table = nn.Embedding(a.vocab_size, all_layers)
            self.ple_proj = nn.Linear(a.dim, all_layers, bias=False)
            self.ple_proj_norm = RMSNorm(a.per_layer_dim, a.norm_eps)
            # The engine's constants (model/ple.cpp): 1.0f / sqrtf(n) and sqrtf(P) in float32.
            self.ple_scales = (f32(np.float32(1) / np.sqrt(np.float32(a.dim))), f32(np.sqrt(np.float32(a.per_layer_dim))),
                               f32(np.float32(1) / np.sqrt(np.float32(2))))
        cos, sin = rope_tables(a.head_size, a.seq_len, a.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self._init_weights()

    def _init_weights(self):
        """N(0, 0.02) for every matrix; the two projections back into the residual stream
        (wo, w2) get 0.02 / sqrt(2 n_layers) so the residual's variance does not grow with depth.
        The per-layer table is N(0, 1) / sqrt(P): the forward pass scales it by sqrt(P)."""
        for name, p in self.named_parameters():
            if name == "ple_table.weight":
                nn.init.normal_(p, mean=0.0, std=1.0 / math.sqrt(self.args.per_layer_dim))
            elif p.dim() == 2:
                std = 0.02 / math.sqrt(2 * self.args.n_layers) if name.endswith(("wo.weight", "w2.weight")) else 0.02
                nn.init.normal_(p, mean=0.0, std=std)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens int64 [B, T] at positions 0..T-1 -> logits float32 [B, T, V]."""
        t = tokens.shape[1]
        if t > self.args.seq_len:
            raise ValueError(f"{t} tokens exceed seq_len {self.args.seq_len}")
        mask = torch.full((t, t), float("-inf")).triu(1)
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        x = self.tok_embeddings(tokens)
        ple = self.per_layer_inputs(tokens, x)
        for l, layer in enumerate(self.layers):
            x = layer(x, cos, sin, mask, None if ple is None else ple[:, :, l])
        return self.output(self.norm(x))

    def per_layer_inputs(self, tokens, x):
        """ple [B, T, L, P] of docs/ple.md (None for llama): (rmsnorm per slice of
        ple_proj(x) / sqrt(D)) + ple_table[tokens] * sqrt(P), times 1 / sqrt(2)."""
        a = self.args
        if not a.per_layer_dim:
            return None
        inv_sqrt_dim, sqrt_p, inv_sqrt2 = self.ple_scales
        shape = (*tokens.shape, a.n_layers, a.per_layer_dim)
        q = self.ple_proj_norm((self.ple_proj(x) * inv_sqrt_dim).view(shape))
        return (q + self.ple_table(tokens).view(shape) * sqrt_p) * inv_sqrt2

    def role_tensors(self) -> dict:
        """The weights by the engine's role names (train/schema.py): a global role's tensor, or a
        per-layer role's list of tensors, layer by layer. The GGUF writer and reader
        (train/gguf.py) take every file name from the schema; this map is all a kind adds."""
        per_layer = {"rms_att": lambda l: l.attention_norm.weight, "wq": lambda l: l.attention.wq.weight,
                     "wk": lambda l: l.attention.wk.weight, "wv": lambda l: l.attention.wv.weight,
                     "wo": lambda l: l.attention.wo.weight, "rms_ffn": lambda l: l.ffn_norm.weight,
                     "w1": lambda l: l.feed_forward.w1.weight, "w2": lambda l: l.feed_forward.w2.weight,
                     "w3": lambda l: l.feed_forward.w3.weight}
        out = {"token_embedding": self.tok_embeddings.weight, "rms_final": self.norm.weight}
        if self.args.per_layer_dim:
            per_layer.update({"ple_gate": lambda l: l.per_layer.gate.weight, "ple_out": lambda l: l.per_layer.out.weight,
                              "ple_post_norm": lambda l: l.per_layer.post_norm.weight})
            out.update({"ple_table": self.ple_table.weight, "ple_proj": self.ple_proj.weight,
                        "ple_proj_norm": self.ple_proj_norm.weight})
        out.update({name: [get(layer) for layer in self.layers] for name, get in per_layer.items()})
        if not self.args.tied:
            out["wcls"] = self.output.weight
        return out

    def config_fields(self) -> dict:
        """The integer config fields by the engine's names (format/architecture.h)."""
        a = self.args
        fields = {"dim": a.dim, "hidden_dim": a.hidden_dim, "n_layers": a.n_layers, "n_heads": a.n_heads,
                  "n_kv_heads": a.n_kv_heads, "seq_len": a.seq_len, "vocab_size": a.vocab_size}
        if a.per_layer_dim:
            fields["per_layer_dim"] = a.per_layer_dim
        return fields

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
