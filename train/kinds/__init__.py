"""The trainer's model kinds beyond train/model.py's llama and pocketlm-ple: one module each,
found by name, so that a kind adds its module and nothing else here.

A kind's module defines
    ARCHITECTURE: str                the GGUF general.architecture its engine row has
    random_model(vocab_size, seed)   a small torch model of the kind with random weights, whose
        role_tensors() gives its weights by the engine's role names (train/schema.py),
        config_fields() its config by the engine's field names, args.norm_eps and
        args.rope_theta its floats, and forward(tokens [B, T]) its logits [B, T, V];
and train/kind_parity.py checks every module against the engine's kind of the same name.
"""
from __future__ import annotations

import importlib
import pkgutil


def modules() -> list:
    """Every kind module in this package, by name."""
    return [importlib.import_module(f"{__name__}.{m.name}") for m in sorted(pkgutil.iter_modules(__path__),
                                                                         key=lambda m: m.name)]
