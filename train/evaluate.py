"""Validation loss computed as `pocketlm eval` computes it (apps/pocketlm/cmd_eval.cpp): each
story (BOS first) is read in windows of ``window`` tokens starting every ``stride`` tokens, each
window from position 0, and every token after BOS is scored once, in the first window that
predicts it. The mean of -ln p over the scored tokens is the cross-entropy in nats/token.
"""
from __future__ import annotations

import os
import re
import subprocess

import numpy as np
import torch
import torch.nn.functional as F


def eval_windows(stories: list[np.ndarray], window: int, stride: int):
    """Yields (inputs, targets, scored) per window: int64 [n], int64 [n], bool [n]."""
    for s in stories:
        scored_upto = 1
        start = 0
        while scored_upto < len(s):
            n = min(window, len(s) - 1 - start)
            inputs = s[start:start + n]
            targets = s[start + 1:start + 1 + n]
            positions = np.arange(start + 1, start + 1 + n)
            scored = positions >= scored_upto
            scored_upto = max(scored_upto, start + n + 1)
            yield inputs, targets, scored
            start += stride


@torch.no_grad()
def validation_loss(model, stories: list[np.ndarray], window: int, stride: int | None = None,
                    batch_size: int = 32) -> tuple[float, int]:
    """(mean cross-entropy in nats/token, tokens scored) of ``model`` on ``stories``."""
    stride = stride or max(1, window // 2)
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    batch = []

    def run(batch):
        nonlocal total, count
        t = max(len(w[0]) for w in batch)
        x = torch.zeros(len(batch), t, dtype=torch.int64)
        y = torch.zeros(len(batch), t, dtype=torch.int64)
        m = torch.zeros(len(batch), t, dtype=torch.bool)
        for i, (inp, tgt, sc) in enumerate(batch):
            x[i, :len(inp)] = torch.from_numpy(inp)
            y[i, :len(tgt)] = torch.from_numpy(tgt)
            m[i, :len(sc)] = torch.from_numpy(sc)
        nll = F.cross_entropy(model(x).double().flatten(0, 1), y.flatten(), reduction="none")
        total += float(nll[m.flatten()].sum())
        count += int(m.sum())

    for w in eval_windows(stories, window, stride):
        batch.append(w)
        if len(batch) == batch_size:
            run(batch)
            batch = []
    if batch:
        run(batch)
    model.train(was_training)
    return total / count, count


_FIGURES = re.compile(r"(cross-entropy|perplexity|bits per byte)\s+(\S+)")


def pocketlm_eval(build: str, model: str, text: str, split: str, tokenizer: str | None = None) -> tuple[str, dict]:
    """`pocketlm eval MODEL TEXT --split SPLIT [-z TOKENIZER]`: its output and its figures as
    printed, by name ("cross-entropy", "perplexity", "bits per byte")."""
    args = [os.path.join(build, "pocketlm"), "eval", model, text, "--split", split] + (["-z", tokenizer] if tokenizer else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return out, {m.group(1): m.group(2) for m in map(_FIGURES.match, out.splitlines()) if m}
