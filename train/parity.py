"""PyTorch against pocketlm on the same weights: greedy tokens and logits.

For each prompt, pocketlm encodes it and continues it greedily (`pocketlm run -t 0
--token-log`); pocketlm-probe writes the logits of those forward passes; the PyTorch model
(weights read from the same GGUF file) is fed the same tokens. Required: the same ``steps``
greedy tokens from all three, and per step max|logit_pt - logit_pocketlm| <= rtol * max|logit|.

    /usr/bin/python3 -m train.parity MODEL.gguf BUILD_DIR
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

from . import schema as schema_mod
from .gguf import load_model

PROMPTS = ["Once upon a time", "Lily and Ben went to the park. They saw",
           "The little dog was sad because", "Tom had a red ball."]


def _token_log(pocketlm: str, model: str, prompt: str, steps: int, path: str) -> tuple[list[int], list[int]]:
    """(prompt ids, next-token ids per position) of `pocketlm run -t 0`."""
    subprocess.run([pocketlm, "run", model, "-t", "0", "-n", str(steps), "-i", prompt, "--token-log", path],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open(path) as f:
        lines = f.read().split("\n")
    return [int(v) for v in lines[0].split()[1:]], [int(v) for v in lines[1:] if v]


def check_prompt(model, gguf: str, build: str, prompt: str, steps: int, rtol: float, tmp: str) -> list[str]:
    """Problems found for one prompt (empty: parity holds)."""
    pocketlm, probe = os.path.join(build, "pocketlm"), os.path.join(build, "pocketlm-probe")
    ids, _ = _token_log(pocketlm, gguf, prompt, 1, os.path.join(tmp, "log"))
    _, nexts = _token_log(pocketlm, gguf, prompt, len(ids) - 1 + steps, os.path.join(tmp, "log"))
    run_tokens = nexts[len(ids) - 1:]
    out = os.path.join(tmp, "logits.f32")
    probe_run = subprocess.run([probe, "logits", gguf, str(steps), out] + [str(i) for i in ids],
                               check=True, capture_output=True, text=True)
    probe_tokens = [int(v) for v in probe_run.stdout.split()]
    ours = np.fromfile(out, dtype="<f4").reshape(steps, -1)
    problems = []
    # pocketlm run stops when it picks BOS (id 1); up to there it must agree with the probe.
    if run_tokens != probe_tokens[:len(run_tokens)] or (len(run_tokens) < steps and run_tokens[-1:] != [1]):
        problems.append(f"`pocketlm run` tokens {run_tokens} differ from the probe's {probe_tokens}")
    with torch.no_grad():
        x = torch.tensor([ids + probe_tokens[:-1]], dtype=torch.int64)
        theirs = model(x)[0, len(ids) - 1:].numpy()
    pt_tokens = theirs.argmax(axis=1).tolist()
    if pt_tokens != probe_tokens:
        first = next(i for i, (a, b) in enumerate(zip(pt_tokens, probe_tokens)) if a != b)
        problems.append(f"greedy tokens part at step {first}: PyTorch {pt_tokens[first]}, pocketlm {probe_tokens[first]}")
    rel = np.abs(theirs - ours).max(axis=1) / np.abs(ours).max(axis=1)
    worst = int(rel.argmax())
    if rel[worst] > rtol:
        problems.append(f"logits at step {worst} differ by {rel[worst]:.3g} of their largest magnitude (> {rtol:g})")
    print(f"  {prompt!r}: {len(ids)} prompt ids, {steps} greedy tokens "
          f"{'equal' if pt_tokens == probe_tokens else 'DIFFERENT'}, max relative logit difference {rel.max():.2e}")
    return problems


def check(gguf: str, build: str, steps: int = 64, rtol: float = 1e-4, prompts=PROMPTS) -> bool:
    torch.set_num_threads(1)
    model = load_model(gguf, schema_mod.load(build))
    print(f"parity: PyTorch vs pocketlm on {gguf}")
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in prompts:
            problems += [f"{p!r}: {m}" for m in check_prompt(model, gguf, build, p, steps, rtol, tmp)]
    for m in problems:
        print(f"parity: FAIL {m}", file=sys.stderr)
    print("parity: ok" if not problems else f"parity: {len(problems)} problem(s)")
    return not problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="GGUF file (F32 or F16 tensors)")
    ap.add_argument("build", help="build directory holding pocketlm and pocketlm-probe")
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--rtol", type=float, default=1e-4)
    a = ap.parse_args(argv)
    for f in (a.model, os.path.join(a.build, "pocketlm"), os.path.join(a.build, "pocketlm-probe")):
        if not os.path.exists(f):
            print(f"parity: error: {f}: no such file", file=sys.stderr)
            return 1
    return 0 if check(a.model, a.build, a.steps, a.rtol) else 1


if __name__ == "__main__":
    sys.exit(main())
