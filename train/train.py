"""The training loop: AdamW, linear warm-up then cosine decay of the learning rate, gradient
clipping, periodic validation, checkpoints, a step budget (deterministic) or a time budget, a
progress line with loss and tokens/s, and the loss curve as a PNG. Ctrl-C in the loop saves a
checkpoint of the last whole step and raises Interrupted.

``train(cfg, model_args, train_stories, val_stories, out_dir)`` returns the history.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from .data import BatchSampler
from .evaluate import validation_loss
from .model import ModelArgs, Transformer


@dataclass
class TrainConfig:
    steps: int = 1000  # optimizer steps (the budget; deterministic)
    time_budget_s: float = 0.0  # > 0: also stop after this many seconds (not deterministic)
    batch_size: int = 32  # windows per step
    learning_rate: float = 2e-3  # peak
    min_lr: float = 2e-4  # at the end of the cosine
    warmup_steps: int = 50
    weight_decay: float = 0.1  # matrices only; norms and nothing else decay-free
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0  # max global L2 norm of the gradients; 0 = off
    eval_every: int = 200  # steps between validation losses (and checkpoints)
    eval_stories: int = 0  # validation stories read in the periodic checks (0 = all)
    seed: int = 1337
    threads: int = 1  # intra-op threads: 2 is up to 5x slower than 1 when other jobs share the cores
    distill_alpha: float = 0.0  # with a teacher: loss = (1 - a) CE(next token) + a KL(teacher || student)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during training: the checkpoint of ``step`` is in ``path`` (``resume`` continues it)."""

    def __init__(self, step: int, path: str):
        super().__init__(f"interrupted at step {step}; checkpoint saved to {path}")
        self.step, self.path = step, path


class CheckpointMismatch(ValueError):
    """``resume`` found a checkpoint of another model shape."""


@contextlib.contextmanager
def sigint_deferred():
    """A list that Ctrl-C appends to instead of raising KeyboardInterrupt, for the loop to read
    between steps: an exception inside optimizer.step() would leave half-updated weights to
    save. A second Ctrl-C raises at once. Where SIGINT is not Python's (ignored, as in a
    background job, or another handler's) or off the main thread, it is left alone."""
    hits: list[int] = []
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield hits
        return

    def handler(signum, frame):
        hits.append(signum)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    signal.signal(signal.SIGINT, handler)
    try:
        yield hits
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def save_atomically(state: dict, path: str) -> None:
    """torch.save to ``path`` through a temporary file: a run stopped while writing keeps the
    previous checkpoint whole."""
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def lr_at(step: int, c: TrainConfig) -> float:
    """Learning rate for optimizer step ``step`` (0-based)."""
    if step < c.warmup_steps:
        return c.learning_rate * (step + 1) / c.warmup_steps
    progress = (step - c.warmup_steps) / max(1, c.steps - c.warmup_steps)
    return c.min_lr + 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress))) * (c.learning_rate - c.min_lr)


def make_optimizer(model: Transformer, c: TrainConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": c.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=c.learning_rate, betas=(c.beta1, c.beta2))


class Progress:
    """One line per update: a bar on a terminal (rewritten in place), plain lines otherwise."""

    def __init__(self, total: int):
        self.total, self.tty, self.last = total, sys.stderr.isatty(), 0.0

    def update(self, step: int, loss: float, tok_s: float, lr: float, elapsed: float, force: bool = False):
        now = time.time()
        if not force and now - self.last < (0.5 if self.tty else 15.0):
            return
        self.last = now
        done = step / self.total
        eta = elapsed / done - elapsed if done > 0 else 0.0
        bar = "#" * int(30 * done) + "-" * (30 - int(30 * done))
        line = (f"train [{bar}] step {step}/{self.total} loss {loss:.4f} lr {lr:.2e} "
                f"{tok_s:,.0f} tok/s {elapsed / 60:.1f} min, eta {eta / 60:.1f} min")
        sys.stderr.write(("\r" + line + "\x1b[K") if self.tty else line + "\n")
        sys.stderr.flush()

    def end(self):
        if self.tty:
            sys.stderr.write("\n")


def plot_losses(history: dict, path: str, title: str) -> None:
    """Training loss (smoothed) and validation loss against tokens seen, as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    steps = [h["tokens"] / 1e6 for h in history["train"]]
    losses = [h["loss"] for h in history["train"]]
    smooth, acc = [], None
    for v in losses:
        acc = v if acc is None else 0.95 * acc + 0.05 * v
        smooth.append(acc)
    ax.plot(steps, losses, color="tab:blue", alpha=0.25, linewidth=0.8)
    ax.plot(steps, smooth, color="tab:blue", label="train (EMA 0.95)")
    ax.plot([h["tokens"] / 1e6 for h in history["val"]], [h["loss"] for h in history["val"]],
            "o-", color="tab:orange", label="validation (held-out 5 %)")
    ax.set_xlabel("training tokens (millions)")
    ax.set_ylabel("cross-entropy (nats/token)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def loss_of(model: Transformer, x, y, teacher: Transformer | None, alpha: float) -> torch.Tensor:
    """Cross-entropy of the next tokens; with a teacher and alpha > 0, mixed with the KL
    divergence from the teacher's next-token distribution to the student's (Hinton et al.,
    2015, "Distilling the Knowledge in a Neural Network", at temperature 1), per token."""
    logits = model(x).flatten(0, 1)
    ce = F.cross_entropy(logits, y.flatten())
    if teacher is None or alpha <= 0:
        return ce
    with torch.no_grad():
        target = F.log_softmax(teacher(x).flatten(0, 1), dim=-1)
    kl = F.kl_div(F.log_softmax(logits, dim=-1), target, log_target=True, reduction="batchmean")
    return (1 - alpha) * ce + alpha * kl


def train(c: TrainConfig, a: ModelArgs, train_stories, val_stories, out_dir: str, log=print,
          resume: bool = False, teacher: Transformer | None = None) -> tuple[Transformer, dict]:
    """Trains a model of shape ``a`` on the encoded stories; writes ``out_dir``/ckpt.pt at every
    validation and returns (model, history). The history holds the training loss of every step
    and the validation losses, each with the tokens seen and seconds spent (with a ``teacher`` and
    ``c.distill_alpha`` > 0 the training loss is the mixed one of loss_of(), the validation loss
    cross-entropy alone). ``resume``: continue from ``out_dir``/ckpt.pt (model, optimizer,
    sampler, step and history), which must exist (FileNotFoundError; CheckpointMismatch for
    another shape's). Ctrl-C in the loop ends the current step, writes the checkpoint as
    validation does and raises Interrupted."""
    torch.manual_seed(c.seed)
    torch.set_num_threads(c.threads)
    os.makedirs(out_dir, exist_ok=True)
    model = Transformer(a)
    optimizer = make_optimizer(model, c)
    sampler = BatchSampler(train_stories, c.batch_size, a.seq_len, c.seed)
    val_subset = val_stories[:c.eval_stories] if c.eval_stories else val_stories
    history = {"train": [], "val": [], "config": asdict(c), "model": a.to_dict(), "params": model.num_params()}
    tokens_per_step = c.batch_size * a.seq_len
    log(f"model: {model.num_params():,} parameters {a.to_dict()}")
    log(f"training: {c.steps} steps x {tokens_per_step} tokens = {c.steps * tokens_per_step / 1e6:.2f} M tokens "
        f"({sum(len(s) for s in train_stories) / 1e6:.2f} M in the training stories)")

    def checkpoint(step):
        save_atomically({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                         "sampler": sampler.state(), "args": a.to_dict(), "config": asdict(c), "history": history,
                         "train_seconds": train_seconds}, ckpt_path)

    def validate(step, elapsed):
        loss, n = validation_loss(model, val_subset, a.seq_len)
        history["val"].append({"step": step, "tokens": step * tokens_per_step, "loss": loss, "seconds": elapsed})
        checkpoint(step)
        return loss, n

    progress = Progress(c.steps)
    start = time.time()
    train_seconds = 0.0  # excludes validation
    step = 0
    ckpt_path = os.path.join(out_dir, "ckpt.pt")
    if resume:
        if not os.path.isfile(ckpt_path):
            raise FileNotFoundError(f"{ckpt_path}: no such file (nothing to resume)")
        ckpt = torch.load(ckpt_path, map_location="cpu")
        if ckpt["args"] != a.to_dict():
            raise CheckpointMismatch(f"{ckpt_path}: the checkpoint's model {ckpt['args']} is not this recipe's "
                                     f"{a.to_dict()}")
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        sampler.restore(ckpt["sampler"])
        step, history, train_seconds = ckpt["step"], ckpt["history"], ckpt["train_seconds"]
        log(f"resumed from {ckpt_path} at step {step}")
    model.train()
    with sigint_deferred() as stop:
        while step < c.steps:
            lr = lr_at(step, c)
            for g in optimizer.param_groups:
                g["lr"] = lr
            t0 = time.time()
            x, y = sampler.sample()
            loss = loss_of(model, x, y, teacher, c.distill_alpha)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if c.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), c.grad_clip)
            optimizer.step()
            train_seconds += time.time() - t0
            step += 1
            history["train"].append({"step": step, "tokens": step * tokens_per_step, "loss": float(loss)})
            elapsed = time.time() - start
            progress.update(step, float(loss), step * tokens_per_step / train_seconds, lr, elapsed,
                            force=step == c.steps)
            if step % c.eval_every == 0 or step == c.steps or (c.time_budget_s and elapsed >= c.time_budget_s):
                vloss, n = validate(step, elapsed)
                progress.end()
                log(f"step {step}: validation loss {vloss:.4f} nats/token ({n} tokens), "
                    f"{train_seconds / 60:.1f} min training, {step * tokens_per_step / train_seconds:,.0f} tok/s")
                if c.time_budget_s and elapsed >= c.time_budget_s and step < c.steps:
                    log(f"time budget of {c.time_budget_s:.0f} s reached at step {step}")
                    break
            if stop:
                break
    if stop:
        progress.end()
        checkpoint(step)
        raise Interrupted(step, ckpt_path)
    if not history["val"] or history["val"][-1]["step"] != step:  # resumed at or past c.steps
        vloss, n = validate(step, time.time() - start)
        log(f"step {step}: validation loss {vloss:.4f} nats/token ({n} tokens)")
    history["minutes"] = (time.time() - start) / 60
    history["train_minutes"] = train_seconds / 60
    history["tokens_per_s"] = step * tokens_per_step / train_seconds
    with open(os.path.join(out_dir, "history.json"), "w") as f:
        json.dump(history, f)
    return model, history
