"""Writes a trained model: as F32 GGUF by the engine's names (write_gguf, through train/gguf.py),
or as a llama2.c checkpoint (``../shared/spec/llama2c-compat.md``): v0 (legacy fp32: config,
then the tensors in run.c's order with freq_cis) or v1 (fp32 with the "ak42" header). The
quantized types come from `pocketlm convert` (run.py).
"""
from __future__ import annotations

import struct

import numpy as np
import torch

from . import gguf
from .model import ModelArgs, Transformer, rope_tables
from .schema import Schema

V1_MAGIC = 0x616B3432


def _write(f, t: torch.Tensor) -> None:
    f.write(t.detach().to(torch.float32).contiguous().numpy().astype("<f4").tobytes())


def _stack(model: Transformer, get) -> torch.Tensor:
    return torch.stack([get(layer) for layer in model.layers])


def _config(a: ModelArgs, vocab: int) -> bytes:
    return struct.pack("<7i", a.dim, a.hidden_dim, a.n_layers, a.n_heads, a.n_kv_heads, vocab, a.seq_len)


def _layer_tensors(model: Transformer) -> dict:
    """The per-layer roles, each stacked [n_layers, ...]."""
    return {name: torch.stack(v) for name, v in model.role_tensors().items() if isinstance(v, list)}


@torch.no_grad()
def write_gguf(model: Transformer, path: str, schema: Schema, vocab: gguf.Vocab | None, name: str,
               arch: str | None = None) -> None:
    """An F32 GGUF file of `model` (of its own architecture unless `arch` says), as `pocketlm
    convert --to gguf` would write it."""
    arch = arch or model.args.architecture
    as_numpy = {k: (torch.stack(v) if isinstance(v, list) else v).detach().to(torch.float32).numpy()
                for k, v in model.role_tensors().items()}
    gguf.write_gguf(path, schema, arch, model.config_fields(), model.args.norm_eps, model.args.rope_theta, as_numpy,
                    vocab, name)


@torch.no_grad()
def write_v0(model: Transformer, path: str) -> None:
    """llama2.c's legacy format; an untied classifier is marked by a negative vocab_size."""
    a = model.args
    t = _layer_tensors(model)
    with open(path, "wb") as f:
        f.write(_config(a, a.vocab_size if a.tied else -a.vocab_size))
        _write(f, model.tok_embeddings.weight)
        for name in ("rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1", "w2", "w3"):
            _write(f, t[name])
        _write(f, model.norm.weight)
        cos, sin = rope_tables(a.head_size, a.seq_len, a.rope_theta)  # unused by readers, but present
        _write(f, cos)
        _write(f, sin)
        if not a.tied:
            _write(f, model.output.weight)


@torch.no_grad()
def write_v1(model: Transformer, path: str) -> None:
    """llama2.c version 1: a 256-byte header (magic, version, config, shared flag), then fp32
    norms first and the matrices after."""
    a = model.args
    t = _layer_tensors(model)
    with open(path, "wb") as f:
        header = struct.pack("<Ii", V1_MAGIC, 1) + _config(a, a.vocab_size) + struct.pack("<B", 1 if a.tied else 0)
        f.write(header + b"\0" * (256 - len(header)))
        _write(f, t["rms_att"])
        _write(f, t["rms_ffn"])
        _write(f, model.norm.weight)
        _write(f, model.tok_embeddings.weight)
        for name in ("wq", "wk", "wv", "wo", "w1", "w2", "w3"):
            _write(f, t[name])
        if not a.tied:
            _write(f, model.output.weight)


def load_checkpoint(path: str) -> Transformer:
    """The model of a training checkpoint (ckpt.pt)."""
    ckpt = torch.load(path, map_location="cpu")
    model = Transformer(ModelArgs(**ckpt["args"]))
    model.load_state_dict(ckpt["model"])
    model.eval()
    return model


def read_v1(path: str) -> Transformer:
    """A model from a llama2.c v1 file (the inverse of write_v1; parity tests load the shipped
    model's weights this way)."""
    with open(path, "rb") as f:
        data = f.read()
    magic, version = struct.unpack_from("<Ii", data, 0)
    if magic != V1_MAGIC or version != 1:
        raise ValueError(f"{path}: not a llama2.c v1 checkpoint")
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack_from("<7i", data, 8)
    tied = data[36] == 1
    a = ModelArgs(dim=dim, n_layers=layers, n_heads=heads, n_kv_heads=kv_heads, vocab_size=vocab,
                  hidden_dim=hidden, seq_len=seq_len, tied=tied)
    model = Transformer(a)
    floats = np.frombuffer(data, dtype="<f4", offset=256)
    pos = 0

    def take(*shape):
        nonlocal pos
        n = int(np.prod(shape))
        out = torch.from_numpy(floats[pos:pos + n].astype(np.float32).reshape(shape))
        pos += n
        return out

    kv = a.n_kv_heads * a.head_size
    rms_att, rms_ffn, rms_final = take(layers, dim), take(layers, dim), take(dim)
    emb = take(vocab, dim)
    shapes = {"wq": (dim, dim), "wk": (kv, dim), "wv": (kv, dim), "wo": (dim, dim),
              "w1": (hidden, dim), "w2": (dim, hidden), "w3": (hidden, dim)}
    mats = {name: take(layers, *shape) for name, shape in shapes.items()}
    with torch.no_grad():
        model.tok_embeddings.weight.copy_(emb)
        model.norm.weight.copy_(rms_final)
        for i, layer in enumerate(model.layers):
            layer.attention_norm.weight.copy_(rms_att[i])
            layer.ffn_norm.weight.copy_(rms_ffn[i])
            for name in ("wq", "wk", "wv", "wo"):
                getattr(layer.attention, name).weight.copy_(mats[name][i])
            for name in ("w1", "w2", "w3"):
                getattr(layer.feed_forward, name).weight.copy_(mats[name][i])
        if not tied:
            model.output.weight.copy_(take(vocab, dim))
    if pos != len(floats):
        raise ValueError(f"{path}: {len(floats) - pos} floats left over after the tensors")
    model.eval()
    return model
