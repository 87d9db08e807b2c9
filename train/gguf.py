"""GGUF v3 for the trainer: reads the F32/F16 tensors and metadata of a file into the PyTorch
model (the parity test loads the shipped model this way), and writes a trained model as F32
GGUF, byte for byte as `pocketlm convert --to gguf` writes it (train.selftest checks). Every
name, key and the tensor order come from the engine's schema (train/schema.py), so a model kind
the engine has a row for is written and read without a list of names here; the kind's trainer
class supplies its tensors by role (`role_tensors()`). Quantized types come from `pocketlm
convert`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import torch

from .model import ModelArgs, Transformer
from .schema import Schema

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_U32, _I32, _F32, _BOOL = 4, 5, 6, 7
ALIGNMENT = 32
FILE_TYPE_F32, QUANTIZATION_VERSION = 0, 2
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_BYTE = 1, 2, 3, 6
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


def read_gguf(path: str, with_tensors: bool = True) -> tuple[dict, dict]:
    """(metadata {key: value}, tensors {name: float32 numpy array shaped [rows, cols]}); with
    with_tensors=False the metadata alone (the tensors may then be of any type)."""
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
    if not with_tensors:
        return meta, {}
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


def load_model(path: str, schema: Schema) -> Transformer:
    """The PyTorch model holding a GGUF file's weights (`llama` or `pocketlm-ple`: the trainer's class)."""
    meta, t = read_gguf(path)
    arch = meta["general.architecture"]
    # The config fields by the architecture row's keys (the reader's fallbacks: kv heads = heads,
    # the vocabulary from the embedding table).
    fields = {k.field: meta[f"{arch}.{k.suffix}"] for k in schema.architecture(arch).keys if f"{arch}.{k.suffix}" in meta}
    fields.setdefault("n_kv_heads", fields["n_heads"])
    fields.setdefault("vocab_size", t[schema.role("token_embedding").gguf_name].shape[0])
    a = ModelArgs(dim=fields["dim"], n_layers=fields["n_layers"], n_heads=fields["n_heads"],
                  n_kv_heads=fields["n_kv_heads"], vocab_size=fields["vocab_size"], hidden_dim=fields["hidden_dim"],
                  seq_len=fields["seq_len"], tied=schema.role("wcls").gguf_name not in t,
                  norm_eps=meta.get(f"{arch}.attention.layer_norm_rms_epsilon", 1e-5),
                  rope_theta=meta.get(f"{arch}.rope.freq_base", 10000.0), per_layer_dim=fields.get("per_layer_dim", 0))
    model = Transformer(a)
    with torch.no_grad():
        for name, target in model.role_tensors().items():
            role = schema.role(name)
            if role.per_layer:
                for layer, p in enumerate(target):
                    p.copy_(torch.from_numpy(t[role.gguf_tensor_name(layer)].copy()))
            else:
                target.copy_(torch.from_numpy(t[role.gguf_name].copy()))
    model.eval()
    return model


@dataclass
class Vocab:
    """A SentencePiece-style vocabulary as GGUF holds it: pieces spelled with U+2581 for spaces,
    scores, token types (TOKEN_*), and the BOS and EOS ids."""
    pieces: list
    scores: list
    types: list
    bos: int = 1
    eos: int = 2

    @staticmethod
    def from_gguf(meta: dict) -> "Vocab":
        return Vocab(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"], meta["tokenizer.ggml.token_type"],
                     meta.get("tokenizer.ggml.bos_token_id", 1), meta.get("tokenizer.ggml.eos_token_id", 2))


class _Writer:
    def __init__(self):
        self.out = bytearray()

    def put(self, fmt: str, *v) -> None:
        self.out += struct.pack(fmt, *v)

    def string(self, s) -> None:
        b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
        self.put("<Q", len(b))
        self.out += b

    def key(self, k: str, t: int) -> None:
        self.string(k)
        self.put("<I", t)

    def pad(self) -> None:
        self.out += b"\0" * (-len(self.out) % ALIGNMENT)


def write_gguf(path: str, schema: Schema, arch: str, config: dict, rms_eps: float, rope_theta: float,
               tensors: dict, vocab: Vocab | None, name: str) -> None:
    """Writes an F32 GGUF v3 file of architecture `arch`.

    config: the integer config fields by the engine's names ("dim", "n_layers", ...,
        "kind_params[0]"); each key of the architecture's row whose field is positive is written.
    tensors: by role name, a float array [rows, cols] ([cols] for a norm) for a global role and
        [n_layers, rows, cols] for a per-layer one; the roles the architecture allows, its
        required ones among them.
    vocab: the tokenizer to embed (None: none).
    Raises ValueError naming the role or field that is missing or misshapen."""
    a = schema.architecture(arch)
    missing = [r for r in a.required if r not in tensors]
    extra = [r for r in tensors if r not in a.roles]
    if missing or extra:
        raise ValueError(f"{path}: architecture {arch}: tensors missing {missing}, not its roles {extra}")
    hyper = []
    for k in a.keys:
        if k.field not in config and k.required:
            raise ValueError(f"{path}: architecture {arch}: config field {k.field} ({arch}.{k.suffix}) is missing")
        if config.get(k.field, 0) > 0:
            hyper.append((f"{arch}.{k.suffix}", int(config[k.field])))
    hyper.append((f"{arch}.rope.dimension_count", config["dim"] // config["n_heads"]))
    order = schema.tensor_order(arch, set(tensors), config["n_layers"])

    w = _Writer()
    w.put("<4sIQQ", b"GGUF", 3, len(order), 5 + len(hyper) + 2 + (7 if vocab else 0))
    w.key("general.architecture", _STRING)
    w.string(arch)
    w.key("general.name", _STRING)
    w.string(name)
    for k, v in (("general.alignment", ALIGNMENT), ("general.file_type", FILE_TYPE_F32),
                 ("general.quantization_version", QUANTIZATION_VERSION)) + tuple(hyper):
        w.key(k, _U32)
        w.put("<I", v)
    for k, v in ((f"{arch}.attention.layer_norm_rms_epsilon", rms_eps), (f"{arch}.rope.freq_base", rope_theta)):
        w.key(k, _F32)
        w.put("<f", v)
    if vocab:
        w.key("tokenizer.ggml.model", _STRING)
        w.string("llama")
        w.key("tokenizer.ggml.tokens", _ARRAY)
        w.put("<IQ", _STRING, len(vocab.pieces))
        for p in vocab.pieces:
            w.string(p)
        w.key("tokenizer.ggml.scores", _ARRAY)
        w.put("<IQ", _F32, len(vocab.scores))
        w.out += np.asarray(vocab.scores, dtype="<f4").tobytes()
        w.key("tokenizer.ggml.token_type", _ARRAY)
        w.put("<IQ", _I32, len(vocab.types))
        w.out += np.asarray(vocab.types, dtype="<i4").tobytes()
        for k, v in (("tokenizer.ggml.bos_token_id", vocab.bos), ("tokenizer.ggml.eos_token_id", vocab.eos)):
            w.key(k, _U32)
            w.put("<I", v)
        w.key("tokenizer.ggml.add_bos_token", _BOOL)
        w.put("<B", 1)
    datas, offset = [], 0
    for role, layer in order:
        t = np.asarray(tensors[role.name][layer] if role.per_layer else tensors[role.name], dtype="<f4")
        if t.ndim not in (1, 2):
            raise ValueError(f"{path}: tensor {role.name} has shape {t.shape}; [rows, cols] or [cols] per tensor")
        rows, cols = (1, t.shape[0]) if t.ndim == 1 else t.shape
        w.string(role.gguf_tensor_name(layer))
        w.put("<I", 1 if rows == 1 else 2)
        w.put("<Q", cols)
        if rows != 1:
            w.put("<Q", rows)
        w.put("<IQ", 0, offset)  # GGML F32
        datas.append(t.tobytes())
        offset += -(-len(datas[-1]) // ALIGNMENT) * ALIGNMENT
    for d in datas:
        w.pad()
        w.out += d
    w.pad()
    with open(path, "wb") as f:
        f.write(w.out)
