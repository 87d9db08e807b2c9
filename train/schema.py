"""The engine's names for a model kind's tensors and hyperparameters, read from the build
(`pocketlm-probe schema`: the shared role table of src/pocketlm/format/tensor_role.h, the
architecture rows of format/architecture.h and each kind's own roles and forward order from its
schema file), so that the trainer writes and reads GGUF by the
same names the engine uses and a new kind needs no second list here.

    schema = load(build_dir)
    schema.architecture("llama").keys   # [Key("embedding_length", "dim", True), ...]
    schema.tensor_order("llama", present, n_layers)  # [(role, layer), ...] as pocketlm writes them
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Role:
    name: str             # llama2.c's: "wq"
    gguf_name: str | None  # llama.cpp's, with %d for the layer: "blk.%d.attn_q.weight"
    per_layer: bool
    use: str              # "matmul", "norm", "row-gather", "unused"
    shape: tuple          # (rows, cols) as config field names: ("kv_dim", "dim")

    def gguf_tensor_name(self, layer: int) -> str:
        return self.gguf_name % layer if self.per_layer else self.gguf_name


@dataclass(frozen=True)
class Key:
    suffix: str    # "<architecture>.<suffix>": "block_count"
    field: str     # the config field it fills: "n_layers", "kind_params[0]"
    required: bool


@dataclass(frozen=True)
class Architecture:
    name: str
    keys: tuple
    roles: tuple
    required: tuple
    order: tuple  # role names in the order a token reads them (per-layer ones within each layer)


class Schema:
    def __init__(self, data: dict):
        self.roles = [Role(r["name"], r["gguf_name"], r["per_layer"], r["use"], tuple(r["shape"]))
                      for r in data["roles"]]
        self._archs = {a["name"]: Architecture(a["name"], tuple(Key(**k) for k in a["keys"]), tuple(a["roles"]),
                                               tuple(a["required"]), tuple(a["order"])) for a in data["architectures"]}

    def role(self, name: str) -> Role:
        return next(r for r in self.roles if r.name == name)

    def architecture_names(self) -> list[str]:
        return list(self._archs)

    def architecture(self, name: str) -> Architecture:
        if name not in self._archs:
            raise ValueError(f"architecture '{name}' is not one this pocketlm build runs ({', '.join(self._archs)})")
        return self._archs[name]

    def tensor_order(self, arch: str, present: set, n_layers: int) -> list[tuple[Role, int]]:
        """(role, layer) of the roles in `present` that GGUF names, in the order pocketlm's
        converter writes them (llama.cpp's): the global tensors a token of `arch` reads before
        the layers, each layer's tensors, the other global ones (each group in the table's
        order); layer -1 for a global tensor."""
        order = self.architecture(arch).order
        before = set(order[:next(i for i, name in enumerate(order) if self.role(name).per_layer)])
        written = [r for r in self.roles if r.name in present and r.gguf_name]
        out = [(r, -1) for r in written if not r.per_layer and r.name in before]
        out += [(r, layer) for layer in range(n_layers) for r in written if r.per_layer]
        return out + [(r, -1) for r in written if not r.per_layer and r.name not in before]


def load(build: str) -> Schema:
    """The schema of the pocketlm build in `build` (its pocketlm-probe)."""
    out = subprocess.run([os.path.join(build, "pocketlm-probe"), "schema"], check=True, capture_output=True, text=True)
    return Schema(json.loads(out.stdout))
