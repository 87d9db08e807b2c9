"""Each trainer kind module (train/kinds/) against the engine's kind of the same architecture:
a small model with random weights, written by the trainer's GGUF writer with the schema the
build prints, run by PyTorch and by pocketlm-probe (which links the test-only kinds,
tests/kinds/); the greedy tokens must agree and the logits within 1e-4 relative. And every
architecture the build runs has a trainer: train/model.py's (llama, pocketlm-ple) or a module.

    /usr/bin/python3 -m train.kind_parity MODEL.gguf BUILD_DIR    (MODEL: whose vocabulary to embed)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

from . import gguf
from . import kinds
from . import schema as schema_mod

PROMPT = [1, 403, 261, 300, 97]  # BOS and four ids of the embedded vocabulary (512 pieces)
STEPS = 24
RTOL = 1e-4
TRAINER_BUILT_IN = {"llama", "pocketlm-ple"}  # train/model.py's Transformer (ModelArgs.architecture)


def check(module, vocab: gguf.Vocab, schema: schema_mod.Schema, build: str, tmp: str) -> list[str]:
    """Problems of one kind module (empty: parity holds)."""
    arch = module.ARCHITECTURE
    model = module.random_model(len(vocab.pieces), 5)
    path = os.path.join(tmp, f"{arch}.gguf")
    with torch.no_grad():
        tensors = {k: (torch.stack(v) if isinstance(v, list) else v).to(torch.float32).numpy()
                   for k, v in model.role_tensors().items()}
    gguf.write_gguf(path, schema, arch, model.config_fields(), model.args.norm_eps, model.args.rope_theta, tensors,
                    vocab, f"{arch}-parity")
    out = os.path.join(tmp, "logits.f32")
    run = subprocess.run([os.path.join(build, "pocketlm-probe"), "logits", path, str(STEPS), out] +
                         [str(i) for i in PROMPT], capture_output=True, text=True)
    if run.returncode != 0:
        return [f"{arch}: pocketlm-probe: {run.stderr.strip()}"]
    probe_tokens = [int(v) for v in run.stdout.split()]
    ours = np.fromfile(out, dtype="<f4").reshape(STEPS, -1)
    with torch.no_grad():
        theirs = model(torch.tensor([PROMPT + probe_tokens[:-1]], dtype=torch.int64))[0, len(PROMPT) - 1:].numpy()
    problems = []
    if theirs.argmax(axis=1).tolist() != probe_tokens:
        problems.append(f"{arch}: greedy tokens differ: PyTorch {theirs.argmax(axis=1).tolist()}, pocketlm {probe_tokens}")
    rel = float((np.abs(theirs - ours).max(axis=1) / np.abs(ours).max(axis=1)).max())
    if not rel <= RTOL:
        problems.append(f"{arch}: logits differ by {rel:.3g} relative (at most {RTOL})")
    print(f"kind_parity: {arch}: {STEPS} greedy tokens equal, max relative logit difference {rel:.3g}"
          if not problems else "\n".join(problems))
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(prog="python3 -m train.kind_parity", description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a GGUF file whose vocabulary the test models embed")
    ap.add_argument("build", help="the build directory (its pocketlm-probe)")
    a = ap.parse_args()
    meta, _ = gguf.read_gguf(a.model)
    vocab = gguf.Vocab.from_gguf(meta)
    schema = schema_mod.load(a.build)
    found = kinds.modules()
    missing = [f"kind_parity: architecture {name} has no trainer module in train/kinds/"
               for name in schema.architecture_names()
               if name not in TRAINER_BUILT_IN and name not in {m.ARCHITECTURE for m in found}]
    print("\n".join(missing) if missing else f"kind_parity: {len(found)} test-only kind(s): "
          + (", ".join(m.ARCHITECTURE for m in found) or "none (train/kinds/, tests/kinds/)"))
    problems = list(missing)
    with tempfile.TemporaryDirectory() as tmp:
        for module in found:
            problems += check(module, vocab, schema, a.build, tmp)
    return 1 if problems else 0

if __name__ == "__main__":
    sys.exit(main())
