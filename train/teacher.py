"""The teacher: stories260K (Karpathy's model trained on all of TinyStories, MIT licence, in
../shared/models) for distillation. Its llama2.c checkpoint and tokenizer.bin become one GGUF
file through `pocketlm convert` (the engine's own reading of them), which the trainer's model
class loads (train/gguf.py) and parity-checks against pocketlm's logits (train/parity.py); the
stories a student trains on are encoded by the engine's encoder with the teacher's 512 pieces
(`pocketlm-probe encode`), so a student shares the teacher's vocabulary and its logits.
"""
from __future__ import annotations

import os
import subprocess
import tempfile

import numpy as np

from . import data, gguf
from .distill import teacher_files
from .schema import Schema


def make_gguf(build: str, out_dir: str) -> str:
    """The teacher as GGUF (tokenizer inside) in ``out_dir``/teacher.gguf."""
    model, tok = teacher_files()
    path = os.path.join(out_dir, "teacher.gguf")
    subprocess.run([os.path.join(build, "pocketlm"), "convert", model, "--to", "gguf", "-z", tok, "-o", path],
                   check=True, capture_output=True)
    return path


def load(path: str, schema: Schema):
    """The teacher in the trainer's model class, in eval mode, without gradients."""
    model = gguf.load_model(path, schema)
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def vocab(path: str) -> gguf.Vocab:
    """The tokenizer a GGUF file carries (its tensors unread: any type)."""
    meta, _ = gguf.read_gguf(path, with_tensors=False)
    return gguf.Vocab.from_gguf(meta)


def encode_stories(build: str, model_gguf: str, stories: list[str]) -> list[np.ndarray]:
    """Each story as pocketlm encodes a prompt with the model's own tokenizer: BOS, then its ids."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stories.txt")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(f"\n{data.SEPARATOR}\n".join(stories))
        out = subprocess.run([os.path.join(build, "pocketlm-probe"), "encode", model_gguf, "-", path], check=True,
                             capture_output=True, text=True).stdout
    lines = out.splitlines()
    if len(lines) != len(stories):
        raise ValueError(f"pocketlm-probe encode gave {len(lines)} stories for {len(stories)}")
    return [np.array([int(v) for v in line.split()], dtype=np.int64) for line in lines]
