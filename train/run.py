"""Recipes: tokenizer -> model -> export -> GGUF -> checks, end to end.

    /usr/bin/python3 -m train.run RECIPE [--out DIR] [--data FILE] [--build DIR] [--steps N] [--time-budget S]
                                         [--resume]

RECIPE is one of RECIPES below: ``default`` is the model shipped in assets/ (`make train`),
``smoke`` a tiny one for CI (`make train-smoke`, under a minute). ``--data`` is the training
text (default ../shared/data/tinystories-5k.txt): UTF-8 stories separated by lines holding only
``<|endoftext|>``, 5 % of them held out for validation (train/data.py); a text too short for
the split, the recipe's vocabulary or one training window is a one-line error, exit 1.
Everything goes to DIR (default runs/RECIPE): tok<V>.model (SentencePiece), tok<V>.bin
(llama2.c), ckpt.pt, model.bin (llama2.c v1), model_v0.bin, model.gguf (f32, tokenizer inside),
model-q8_0.gguf, loss.png, history.json, summary.json. Exit status 1 when a check fails. ``--resume`` continues an
interrupted run from its last checkpoint (the periodic validation writes it, and so does Ctrl-C during
training, which then exits 130); without DIR/ckpt.pt it is an error. A bad flag value (``--steps 0``)
is one line, exit 1, as is every error of the trainer.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace

# Ctrl-C while torch loads (a second or two) is held until it has: inside torch's C init a
# KeyboardInterrupt becomes a RuntimeError traceback.
_held: list[int] = []
_holding = __name__ == "__main__" and signal.getsignal(signal.SIGINT) is signal.default_int_handler
if _holding:
    signal.signal(signal.SIGINT, lambda signum, frame: _held.append(signum))

from . import check_tokenizer, data, distill, export, parity, teacher, tokenizer
from . import schema as schema_mod
from .model import ModelArgs
from .evaluate import pocketlm_eval
from .train import CheckpointMismatch, Interrupted, TrainConfig, plot_losses, train

if _holding:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if _held:
        print("train: interrupted", file=sys.stderr)
        sys.exit(130)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The shipped model's shape: 0.93 M parameters, 512-token vocabulary, 3.7 MB as GGUF f32.
DEFAULT_SHAPE = ModelArgs(dim=128, n_layers=5, n_heads=4, n_kv_heads=2, vocab_size=512, hidden_dim=320, seq_len=256)
DEFAULT_TRAINING = TrainConfig(steps=6000, batch_size=16, learning_rate=2e-3, min_lr=2e-4, warmup_steps=100,
                               eval_every=300)


@dataclass(frozen=True)
class Recipe:
    model: ModelArgs            # the shape, with its vocabulary size
    training: TrainConfig
    tokenizer: str = "own"      # "own": SentencePiece trained on the text; "teacher": stories260K's tok512;
                                # "llama32k": Llama 2's 32000 pieces (tokenizer.bin, the ESP32 write-up's)
    corpus_tokens: int = 0      # > 0: add that many teacher tokens of stories260K's stories (train/distill.py)
    # Paragraphs of the real training stories one newline apart, as TinyStories publishes them
    # (tinystories-5k.txt has blank lines between them; the validation text and the teacher's
    # stories do not). The held-out split is measured as the file has it.
    single_newlines: bool = False

    def __post_init__(self):
        # The teacher's logits are over its own 512 pieces: a student with other pieces cannot match them.
        if self.training.distill_alpha > 0 and self.tokenizer != "teacher":
            raise ValueError("a recipe with distill_alpha > 0 needs tokenizer='teacher'")


PLE_CORE = ModelArgs(dim=96, n_layers=6, n_heads=4, n_kv_heads=4, vocab_size=512, hidden_dim=64, seq_len=256)
PLE_TRAINING = replace(DEFAULT_TRAINING, steps=800, eval_every=200)

# The ablations' budget (docs/training.md): 2,400 steps, 9.8 M tokens, about half an hour here.
ABLATION_TRAINING = replace(DEFAULT_TRAINING, steps=2400)

SMOKE_SHAPE = ModelArgs(dim=32, n_layers=2, n_heads=2, n_kv_heads=1, vocab_size=512, hidden_dim=96, seq_len=96)
SMOKE_TRAINING = TrainConfig(steps=300, batch_size=16, learning_rate=3e-3, min_lr=3e-4, warmup_steps=20,
                             eval_every=150, eval_stories=40, time_budget_s=55)

RECIPES = {
    # The shipped model: the teacher's 512 pieces and the real training stories with their
    # paragraphs as published (docs/training.md: the teacher's stories did not help at the
    # ablation's budget), 6,000 steps (24.6 M tokens, about 12 passes over them).
    "default": Recipe(DEFAULT_SHAPE, DEFAULT_TRAINING, tokenizer="teacher", single_newlines=True),
    # CI: train -> export -> checks in about a minute (at most 55 s of training).
    "smoke": Recipe(SMOKE_SHAPE, SMOKE_TRAINING),
    # CI too, distillation at the same scale: 40,000 teacher tokens of stories260K's stories
    # after the real ones, its tokenizer, and its logits in the loss.
    "smoke-kd": Recipe(SMOKE_SHAPE, replace(SMOKE_TRAINING, distill_alpha=0.5), tokenizer="teacher",
                       corpus_tokens=40_000),
    # "default" at the ablation's 2,400 steps.
    "t512-real": Recipe(DEFAULT_SHAPE, ABLATION_TRAINING, tokenizer="teacher", single_newlines=True),
    # The distillation ablation (docs/training.md), each at the default's shape and 2,400 steps:
    # the previous shipped model (its own SentencePiece 512 pieces, the real text as the file
    # has it); the default (the teacher's tokenizer, paragraphs as published); + 10 M teacher
    # tokens of stories260K's stories; the default + the teacher's logits in the loss.
    "own512": Recipe(DEFAULT_SHAPE, ABLATION_TRAINING),
    "t512-stories": Recipe(DEFAULT_SHAPE, ABLATION_TRAINING, tokenizer="teacher", corpus_tokens=10_000_000,
                           single_newlines=True),
    "t512-kd": Recipe(DEFAULT_SHAPE, replace(ABLATION_TRAINING, distill_alpha=0.5), tokenizer="teacher",
                      single_newlines=True),
    # The 4096-token vocabulary at the default's shape (a larger embedding table).
    "v4096": Recipe(replace(DEFAULT_SHAPE, vocab_size=4096), ABLATION_TRAINING),
    # The per-layer-embedding ablation (docs/ple.md): the ESP32 write-up's core (dim 96, 6 layers,
    # 4 heads, FFN 64) on the teacher's 512 pieces, the real stories (paragraphs as published)
    # and 10 M teacher tokens of stories260K's stories, the same steps and seed; without PLE, then
    # with per_layer_dim 32, 64 and 128.
    **{name: Recipe(replace(PLE_CORE, per_layer_dim=p), PLE_TRAINING, tokenizer="teacher", corpus_tokens=10_000_000,
                    single_newlines=True) for name, p in (("ple-none", 0), ("ple32", 32), ("ple64", 64), ("ple128", 128))},
    # The ESP32 write-up's shape (docs/ple.md): Llama 2's 32000 pieces, P 128, 24.6 M parameters in
    # the per-layer table; the ablation's data; a budget of 120 steps (0.5 M tokens, 24 minutes on
    # this machine: a step costs about 12 s, the 32000-way classifier and the table's gradient).
    "esp32-ple": Recipe(ModelArgs(dim=96, n_layers=6, n_heads=4, n_kv_heads=4, vocab_size=32000, hidden_dim=64,
                                  seq_len=256, per_layer_dim=128),
                        replace(DEFAULT_TRAINING, steps=120, warmup_steps=12, eval_every=60, eval_stories=40),
                        tokenizer="llama32k",
                        corpus_tokens=10_000_000, single_newlines=True),
    # Our own 4,096 pieces with per-layer embeddings (docs/ple.md): the default's core, P 64, the
    # real stories and 10 M teacher tokens of stories260K's stories.
    "v4096-ple": Recipe(replace(DEFAULT_SHAPE, vocab_size=4096, per_layer_dim=64), ABLATION_TRAINING,
                        corpus_tokens=10_000_000, single_newlines=True),
    # A smaller model (0.3 M parameters) trained as own512.
    "small": Recipe(ModelArgs(dim=64, n_layers=5, n_heads=2, n_kv_heads=2, vocab_size=512, hidden_dim=192, seq_len=256),
                    replace(ABLATION_TRAINING, learning_rate=3e-3, min_lr=3e-4)),
}


def _pocketlm(build: str, *args: str, capture: bool = False) -> str:
    cmd = [os.path.join(build, "pocketlm"), *args]
    r = subprocess.run(cmd, check=True, capture_output=capture, text=True)
    return r.stdout if capture else ""


def same_tokens_every_format(build: str, tok_bin: str, files: list[str]) -> bool:
    """The llama2.c v0 and v1 files (with tokenizer.bin) and the GGUF file (its own tokenizer)
    continue a prompt greedily with the same 64 tokens in pocketlm."""
    logs = []
    for f in files:
        log = f + ".tokens"
        z = [] if f.endswith(".gguf") else ["-z", tok_bin]
        _pocketlm(build, "run", f, *z, "-t", "0", "-n", "64", "-i", "Once upon a time", "--token-log", log,
                  capture=True)
        with open(log) as fh:
            logs.append(fh.read())
        os.unlink(log)
    ok = all(l == logs[0] for l in logs)
    print(f"export: {', '.join(os.path.basename(f) for f in files)}: "
          f"{'the same greedy tokens' if ok else 'DIFFERENT greedy tokens'} in pocketlm")
    return ok


def same_bytes_as_convert(build: str, model_bin: str, tok_bin: str, gguf: str) -> bool:
    """The trainer's GGUF (from the PyTorch model and SentencePiece) is byte for byte what
    `pocketlm convert` makes of the llama2.c v1 export and tokenizer.bin: one export path."""
    theirs = gguf + ".convert"
    _pocketlm(build, "convert", model_bin, "--to", "gguf", "-z", tok_bin, "-o", theirs, capture=True)
    with open(gguf, "rb") as f, open(theirs, "rb") as g:
        ok = f.read() == g.read()
    os.unlink(theirs)
    print(f"export: {os.path.basename(gguf)} {'equals' if ok else 'DIFFERS from'} pocketlm convert's GGUF of "
          f"{os.path.basename(model_bin)}")
    return ok


def make_tokenizer(a, margs: ModelArgs, train_text: list[str], val_text: list[str], out: str):
    """The recipe's tokenizer trained on ``train_text`` into ``out`` and both sides encoded:
    (tok_bin, sp_model, train_ids, val_ids). A text that cannot give the recipe's vocabulary, or
    one training window, raises data.DataError naming --data."""
    vocab = margs.vocab_size
    try:
        sp_model = tokenizer.train_tokenizer(train_text, vocab, os.path.join(out, f"tok{vocab}"))
    except tokenizer.VocabularyUnfit as e:
        why = (f"its training stories support at most {e.limit} tokenizer pieces, fewer than recipe {a.recipe}'s "
               f"vocab_size {vocab}: give more text" if e.too_large else
               f"its characters need at least {e.limit} tokenizer pieces, more than recipe {a.recipe}'s vocab_size "
               f"{vocab}: the recipes' vocabularies fit text of few distinct characters (English prose)")
        raise data.DataError(f"--data {a.data}: {why}") from None
    sp = tokenizer.load(sp_model)
    tok_bin = os.path.join(out, f"tok{vocab}.bin")
    tokenizer.write_tokenizer_bin(sp, tok_bin)
    print(f"tokenizer: SentencePiece BPE, {vocab} pieces -> {sp_model}, {tok_bin}")
    train_ids = data.encode_stories(sp.encode, train_text)
    val_ids = data.encode_stories(sp.encode, val_text)
    train_tokens = sum(len(s) for s in train_ids)
    if train_tokens <= margs.seq_len + 1:  # the BatchSampler draws windows of seq_len + 1 tokens
        raise data.DataError(f"--data {a.data}: its training stories encode to {train_tokens} tokens, not more than "
                             f"one window of seq_len + 1 = {margs.seq_len + 1} (recipe {a.recipe}): give more text")
    return tok_bin, sp_model, train_ids, val_ids


def distilled_stories(a, recipe: Recipe) -> list[str]:
    """recipe.corpus_tokens teacher tokens of stories260K's own stories (runs/distill/, made by
    train/distill.py when missing; [] for none)."""
    if not recipe.corpus_tokens:
        return []
    check_teacher(a)
    t, p = distill.TEMPERATURE, distill.TOP_P
    path = distill.default_path(recipe.corpus_tokens, 1, t, p)
    if not os.path.exists(path):
        corpus, _ = distill.make_corpus(a.build, recipe.corpus_tokens, 1, t, p, os.cpu_count() or 1)
        distill.write_corpus(corpus, path)
    with open(path, encoding="utf-8", newline="") as f:
        corpus = data.split_stories(f.read())
    print(f"distill: {path}: {len(corpus)} stories of stories260K (-t {t:g} -p {p:g})")
    return corpus


def check_teacher(a) -> None:
    for f in distill.teacher_files():
        if not os.path.exists(f):
            raise data.DataError(f"recipe {a.recipe}: {f}: no such file (the teacher, stories260K, comes with "
                                 "../shared or $POCKETLM_SHARED)")


def teacher_data(a, stories: list[str], val_text: list[str], out: str):
    """The teacher's tokenizer: (tok_bin, teacher_gguf, train_ids, val_ids), the stories encoded
    by pocketlm with stories260K's 512 pieces."""
    check_teacher(a)
    tok = distill.teacher_files()[1]
    teacher_gguf = teacher.make_gguf(a.build, out)
    train_ids = teacher.encode_stories(a.build, teacher_gguf, stories)
    val_ids = teacher.encode_stories(a.build, teacher_gguf, val_text)
    print(f"tokenizer: the teacher's {tok} (512 pieces), encoded by pocketlm: "
          f"{sum(len(s) for s in train_ids) / 1e6:.2f} M training tokens")
    return tok, teacher_gguf, train_ids, val_ids


def llama32k_data(a, stories: list[str], val_text: list[str], out: str):
    """Llama 2's 32000 pieces (../shared/models/tokenizer.bin): (tok_bin, vocab_gguf, train_ids,
    val_ids), the stories encoded by pocketlm through a GGUF that carries the tokenizer (the
    esp32-ple shape with random weights, converted to Q4_0 with -z)."""
    tok = os.path.join(data.shared_dir(), "models", "tokenizer.bin")
    if not os.path.exists(tok):
        raise data.DataError(f"recipe {a.recipe}: {tok}: no such file (it comes with ../shared or $POCKETLM_SHARED)")
    f32, vocab_gguf = os.path.join(out, "vocab32k-f32.gguf"), os.path.join(out, "vocab32k.gguf")
    _pocketlm(a.build, "synth", "esp32-ple", "--seed", "1", "-o", f32, capture=True)
    _pocketlm(a.build, "convert", f32, "--to", "gguf", "--type", "q4_0", "-z", tok, "-o", vocab_gguf, capture=True)
    os.unlink(f32)
    train_ids = teacher.encode_stories(a.build, vocab_gguf, stories)
    val_ids = teacher.encode_stories(a.build, vocab_gguf, val_text)
    print(f"tokenizer: {tok} (32000 pieces), encoded by pocketlm: {sum(len(s) for s in train_ids) / 1e6:.2f} M "
          "training tokens")
    return tok, vocab_gguf, train_ids, val_ids


class ArgParser(argparse.ArgumentParser):
    """Errors as the trainer's others: one line, exit 1 (argparse prints its usage and exits 2)."""

    def error(self, message):
        # A flag_type message names its flag and value itself: argparse's "argument --steps: " would repeat it.
        message = re.sub(r"^argument (--[\w-]+): (?=\1 )", "", message)
        self.exit(1, f"train: error: {message}\n")


def flag_type(flag: str, parse, valid, rule: str):
    """An argparse type for ``flag``: ``parse`` the text (int, float), refuse a value that is not
    ``valid`` in a message naming the flag, the value and the ``rule``."""
    def convert(text: str):
        try:
            value = parse(text)
        except ValueError:
            value = None
        if value is None or not valid(value):
            raise argparse.ArgumentTypeError(f"{flag} {text}: {rule}")
        return value
    return convert


def parse_args(argv):
    ap = ArgParser(prog="python3 -m train.run", description="train a pocketlm model end to end")
    ap.add_argument("recipe", choices=sorted(RECIPES))
    ap.add_argument("--out", help="output directory (default runs/RECIPE)")
    # The text is in shared/ only (../shared beside the checkout, or $POCKETLM_SHARED, as for the
    # tests): a recased TinyStories derivative that no public URL serves (docs/sources.md).
    shared = data.shared_dir()
    ap.add_argument("--data", default=os.path.join(shared, "data/tinystories-5k.txt"), metavar="FILE",
                    help="training text: UTF-8 stories separated by lines holding only <|endoftext|>; about 1 "
                         f"story in 20 is held out for validation, so at least {data.min_stories()} stories; enough "
                         "text for the recipe's vocabulary (512 pieces, v4096: 4096) and for one window of "
                         "seq_len + 1 training tokens (default: tinystories-5k.txt in ../shared/data or "
                         "$POCKETLM_SHARED/data, which comes only with shared/, docs/sources.md)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="directory of pocketlm and pocketlm-probe")
    # 0 steps was the recipe's budget, a negative count a ZeroDivisionError: refused here instead.
    ap.add_argument("--steps", metavar="N", help="override the recipe's step budget (N > 0)",
                    type=flag_type("--steps", int, lambda n: n > 0, "must be a positive whole number of steps"))
    ap.add_argument("--time-budget", metavar="SECONDS", help="also stop after this many seconds (0: no time "
                    "budget; default: the recipe's, smoke's is 55 s)",
                    type=flag_type("--time-budget", float, lambda t: t >= 0 and math.isfinite(t),
                                   "must be a finite number of seconds, 0 or more (0: no time budget)"))
    ap.add_argument("--resume", action="store_true", help="continue from DIR/ckpt.pt (written at every validation "
                    "and by Ctrl-C during training); an error when it is missing")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    """Runs the recipe; Ctrl-C is one line and exit 130, with the checkpoint's path when training
    had begun (train() saved it)."""
    a = parse_args(argv)
    try:
        return run_recipe(a)
    except Interrupted as e:
        print(f"train: interrupted at step {e.step}; checkpoint saved to {e.path} (continue with --resume)",
              file=sys.stderr)
    except KeyboardInterrupt:
        print("train: interrupted", file=sys.stderr)
    return 130


def run_recipe(a) -> int:
    recipe = RECIPES[a.recipe]
    margs, tcfg = recipe.model, recipe.training
    vocab = margs.vocab_size
    if a.steps is not None:
        tcfg = replace(tcfg, steps=a.steps, eval_every=min(tcfg.eval_every, a.steps))
    if a.time_budget is not None:
        tcfg = replace(tcfg, time_budget_s=a.time_budget)
    out = a.out or os.path.join(ROOT, "runs", a.recipe)
    for f in (os.path.join(a.build, "pocketlm"), os.path.join(a.build, "pocketlm-probe")):
        if not os.path.exists(f):
            print(f"train: error: {f}: no such file (build first: make build)", file=sys.stderr)
            return 1
    # Checked before any work: a --resume that found nothing used to train from scratch silently.
    ckpt = os.path.join(out, "ckpt.pt")
    if a.resume and not os.path.isfile(ckpt):
        print(f"train: error: --resume: {ckpt}: no such file (nothing to continue; without --resume the run "
              "starts from step 0)", file=sys.stderr)
        return 1
    # --data is checked before training: one line, exit 1, never a traceback; an output directory
    # made for a text that failed its checks, or by a run stopped by Ctrl-C before training, is
    # removed again.
    created = not os.path.exists(out)
    try:
        train_text, val_text = data.load_checked(a.data)
        os.makedirs(out, exist_ok=True)
        started = time.time()
        print(f"data: {a.data}: {len(train_text)} training stories, {len(val_text)} validation stories (split seed "
              f"{data.DEFAULT_SPLIT_SEED})")
        real = [re.sub(r"\n[ \t]*\n+", "\n", s) for s in train_text] if recipe.single_newlines else train_text
        stories = real + distilled_stories(a, recipe)
        if recipe.tokenizer == "teacher":
            tok_bin, teacher_gguf, train_ids, val_ids = teacher_data(a, stories, val_text, out)
            sp_model = None
        elif recipe.tokenizer == "llama32k":  # teacher_gguf: the file whose tokenizer the export embeds
            tok_bin, teacher_gguf, train_ids, val_ids = llama32k_data(a, stories, val_text, out)
            sp_model = None
        else:
            tok_bin, sp_model, train_ids, val_ids = make_tokenizer(a, margs, stories, val_text, out)
    except (data.DataError, KeyboardInterrupt) as e:
        if created and os.path.isdir(out):
            shutil.rmtree(out)
        if isinstance(e, KeyboardInterrupt):
            raise
        print(f"train: error: {e}", file=sys.stderr)
        return 1

    schema = schema_mod.load(a.build)
    teacher_model = None
    if tcfg.distill_alpha > 0:
        # The teacher's logits in PyTorch are pocketlm's (a short parity run), then it teaches.
        if not parity.check(teacher_gguf, a.build, steps=16):
            print("train: error: the teacher in PyTorch does not match pocketlm", file=sys.stderr)
            return 1
        teacher_model = teacher.load(teacher_gguf, schema)
    try:
        model, history = train(tcfg, margs, train_ids, val_ids, out, resume=a.resume, teacher=teacher_model)
    except CheckpointMismatch as e:
        print(f"train: error: --resume: {e}", file=sys.stderr)
        return 1
    val_loss = history["val"][-1]["loss"]

    # llama2.c files hold llama models only; a PLE model is GGUF alone.
    llama2c = not margs.per_layer_dim
    model_bin, model_v0 = os.path.join(out, "model.bin"), os.path.join(out, "model_v0.bin")
    if llama2c:
        export.write_v1(model, model_bin)
        export.write_v0(model, model_v0)
    gguf, gguf_q8 = os.path.join(out, "model.gguf"), os.path.join(out, "model-q8_0.gguf")
    # GGUF by the engine's names (its schema), the quantized copy by pocketlm convert.
    vocab_of = teacher.vocab(teacher_gguf) if sp_model is None else tokenizer.gguf_vocab(tokenizer.load(sp_model))
    export.write_gguf(model, gguf, schema, vocab_of, "model")
    _pocketlm(a.build, "convert", gguf, "--to", "gguf", "--type", "q8_0", "-o", gguf_q8)
    png = os.path.join(out, "loss.png")
    n_params = history["params"]
    plot_losses(history, png, f"{a.recipe}: {n_params / 1e6:.2f} M parameters, vocab {vocab}, "
                              f"{history['train_minutes']:.1f} min of training, 1 thread")

    print("checks:")
    ok = True
    if sp_model is not None:  # the teacher's tokenizer: pocketlm's encoder made the ids
        ok = check_tokenizer.check(sp_model, gguf, "-", a.build, val_text)
    if llama2c:
        ok = same_tokens_every_format(a.build, tok_bin, [model_v0, model_bin, gguf]) and ok
        ok = same_bytes_as_convert(a.build, model_bin, tok_bin, gguf) and ok
    ok = parity.check(gguf, a.build) and ok
    evals = {}
    for name, path in (("f32", gguf), ("q8_0", gguf_q8)):
        # The validation stories only: eval reads the whole file unless told the split.
        text, evals[name] = pocketlm_eval(a.build, path, a.data, "heldout")
        if name == "f32":
            print(text, end="")
    # TinyStories' own validation text, whole (measured, never trained on).
    valid = os.path.join(data.shared_dir(), "data", "tinystories-valid-sample.txt")
    if os.path.exists(valid):
        _, evals["valid_sample"] = pocketlm_eval(a.build, gguf, valid, "all")
        print(f"tinystories-valid-sample.txt: {evals['valid_sample'].get('bits per byte')} bits per byte")
    # The trainer's validation loss is computed as `pocketlm eval` computes it: on all the
    # validation stories they must agree (a check of the split, the tokenizer and the export).
    if not tcfg.eval_stories:
        diff = abs(val_loss - float(evals["f32"]["cross-entropy"]))
        print(f"validation loss: PyTorch {val_loss:.6f}, pocketlm eval {evals['f32']['cross-entropy']} nats/token")
        if diff > 1e-4:
            print(f"validation loss: FAIL: they differ by {diff:.2g}", file=sys.stderr)
            ok = False
    summary = {"recipe": a.recipe, "params": n_params, "vocab": vocab, "model": margs.to_dict(),
               "tokenizer": recipe.tokenizer, "corpus_tokens": recipe.corpus_tokens,
               "distill_alpha": tcfg.distill_alpha, "train_tokens_available": int(sum(len(t) for t in train_ids)),
               "steps": history["train"][-1]["step"], "tokens": history["train"][-1]["tokens"],
               "train_minutes": history["train_minutes"], "tokens_per_s": history["tokens_per_s"],
               "val_loss_pytorch": val_loss, "pocketlm_eval": evals,
               "gguf_bytes": os.path.getsize(gguf), "gguf_q8_0_bytes": os.path.getsize(gguf_q8),
               "total_minutes": (time.time() - started) / 60, "checks_ok": ok}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"result: {a.recipe}: {n_params:,} parameters, vocab {vocab}, {summary['steps']} steps "
          f"({summary['tokens'] / 1e6:.2f} M tokens) in {history['train_minutes']:.1f} min at "
          f"{history['tokens_per_s']:,.0f} tok/s; validation loss {val_loss:.4f} nats/token "
          f"(pocketlm eval f32: {evals['f32'].get('cross-entropy')}, q8_0: {evals['q8_0'].get('cross-entropy')}); "
          f"{gguf} {summary['gguf_bytes']:,} bytes; total {summary['total_minutes']:.1f} min")
    if not ok:
        print("result: a check FAILED (see above)", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
