"""Reads the F32/F16 tensors and the metadata of a GGUF v3 file of the ``llama`` architecture
into the PyTorch model (the parity test loads the shipped model this way). Writing GGUF is
pocketlm's job (`pocketlm convert --to gguf`), not this package's.
"""
from __future__ import annotations

import struct

import numpy as np
import torch

from .model import ModelArgs, Transformer

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_NUMPY_TYPES = {0: "<f4", 1: "<f2"}  # GGML F32, F16


class _Reader:
    def __init__(self, data: bytes, path: str):
        self.data, self.pos, self.path = data, 0, path

    def take(self, fmt: str):
        v = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def string(self) -> str:
        n = self.take("<Q")
        s = self.data[self.pos:self.pos + n].decode("utf-8", errors="replace")
        self.pos += n
        return s

    def value(self, t: int):
        if t in _SCALARS:
            return self.take(_SCALARS[t])
        if t == _STRING:
            return self.string()
        if t == _ARRAY:
            et, n = self.take("<I"), self.take("<Q")
            return [self.value(et) for _ in range(n)]
        raise ValueError(f"{self.path}: GGUF value type {t} unknown")


def read_gguf(path: str) -> tuple[dict, dict]:
    """(metadata {key: value}, tensors {name: float32 numpy array shaped [rows, cols]})."""
    with open(path, "rb") as f:
        data = f.read()
    r = _Reader(data, path)
    if data[:4] != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    r.pos = 4
    version, n_tensors, n_kv = r.take("<I"), r.take("<Q"), r.take("<Q")
    if version != 3:
        raise ValueError(f"{path}: GGUF version {version}, expected 3")
    meta = {}
    for _ in range(n_kv):
        key = r.string()
        meta[key] = r.value(r.take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.take("<Q") for _ in range(r.take("<I"))]
        infos.append((name, dims, r.take("<I"), r.take("<Q")))
    align = meta.get("general.alignment", 32)
    base = (r.pos + align - 1) // align * align
    tensors = {}
    for name, dims, t, offset in infos:
        if t not in _NUMPY_TYPES:
            raise ValueError(f"{path}: tensor {name} has GGML type {t}; only F32 and F16 are read here")
        count = int(np.prod(dims))
        arr = np.frombuffer(data, dtype=_NUMPY_TYPES[t], count=count, offset=base + offset).astype(np.float32)
        tensors[name] = arr.reshape(list(reversed(dims)))  # ne[0] is the innermost (columns)
    return meta, tensors


def load_model(path: str) -> Transformer:
    """The PyTorch model holding a GGUF file's weights."""
    meta, t = read_gguf(path)
    a = ModelArgs(dim=meta["llama.embedding_length"], n_layers=meta["llama.block_count"],
                  n_heads=meta["llama.attention.head_count"],
                  n_kv_heads=meta.get("llama.attention.head_count_kv", meta["llama.attention.head_count"]),
                  vocab_size=t["token_embd.weight"].shape[0], hidden_dim=meta["llama.feed_forward_length"],
                  seq_len=meta["llama.context_length"], tied="output.weight" not in t,
                  norm_eps=meta.get("llama.attention.layer_norm_rms_epsilon", 1e-5),
                  rope_theta=meta.get("llama.rope.freq_base", 10000.0))
    model = Transformer(a)
    names = {"attention_norm.weight": "attn_norm", "attention.wq.weight": "attn_q", "attention.wk.weight": "attn_k",
             "attention.wv.weight": "attn_v", "attention.wo.weight": "attn_output", "ffn_norm.weight": "ffn_norm",
             "feed_forward.w1.weight": "ffn_gate", "feed_forward.w2.weight": "ffn_down",
             "feed_forward.w3.weight": "ffn_up"}
    state = {"tok_embeddings.weight": t["token_embd.weight"], "norm.weight": t["output_norm.weight"],
             "output.weight": t.get("output.weight", t["token_embd.weight"])}
    for i in range(a.n_layers):
        for ours, theirs in names.items():
            state[f"layers.{i}.{ours}"] = t[f"blk.{i}.{theirs}.weight"]
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in state.items()})
    model.eval()
    return model
