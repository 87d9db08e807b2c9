"""The training report: bits per byte of each run, of stories260K and of given model files on
TinyStories' own validation text (tinystories-valid-sample.txt, whole) and on the held-out split
of the training text, with the tokens each was trained on and its minutes, as a markdown table
and a PNG; and what the typographic characters of the validation text cost each model (the same
text with “ ” ’ — folded to ASCII).

    /usr/bin/python3 -m train.report RECIPE... [--model LABEL=FILE.gguf]... [--png FILE] [--build DIR]

A recipe's figures come from runs/RECIPE/summary.json (train/run.py writes it); model files and
stories260K are measured here with `pocketlm eval`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from .data import shared_dir
from .distill import teacher_files
from .evaluate import pocketlm_eval

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLD = {"\u201c": '"', "\u201d": '"', "\u2019": "'", "\u2018": "'", "\u2014": "-"}


def bits_per_byte(build: str, model: str, text: str, split: str, tokenizer: str | None = None) -> float:
    return float(pocketlm_eval(build, model, text, split, tokenizer)[1]["bits per byte"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m train.report", description=__doc__.split("\n\n")[0])
    ap.add_argument("recipes", nargs="*")
    ap.add_argument("--model", action="append", default=[], metavar="LABEL=FILE", help="a model file to measure too")
    ap.add_argument("--png", default=os.path.join(ROOT, "docs", "distillation.png"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args(argv)
    data_dir = os.path.join(shared_dir(), "data")
    valid, train_text = os.path.join(data_dir, "tinystories-valid-sample.txt"), os.path.join(data_dir, "tinystories-5k.txt")
    teacher, tok = teacher_files()
    rows = []  # (label, parameters, tokens, minutes, valid bpb, held-out bpb, model, tokenizer)
    for label, path in (m.split("=", 1) for m in a.model):
        rows.append((label, None, None, None, bits_per_byte(a.build, path, valid, "all"),
                     bits_per_byte(a.build, path, train_text, "heldout"), path, None))
    for r in a.recipes:
        with open(os.path.join(ROOT, "runs", r, "summary.json")) as f:
            s = json.load(f)
        rows.append((r, s["params"], s["tokens"], s["train_minutes"],
                     float(s["pocketlm_eval"]["valid_sample"]["bits per byte"]),
                     float(s["pocketlm_eval"]["f32"]["bits per byte"]), os.path.join(ROOT, "runs", r, "model.gguf"), None))
    rows.append(("stories260K (teacher)", 260_032, None, None, bits_per_byte(a.build, teacher, valid, "all", tok),
                 bits_per_byte(a.build, teacher, train_text, "heldout", tok), teacher, tok))

    print("| model | parameters | tokens trained on | minutes | bits/byte, valid sample | bits/byte, held-out split |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, params, tokens, minutes, v, h, _, _ in rows:
        print(f"| {label} | {f'{params:,}' if params else '—'} | {f'{tokens / 1e6:.1f} M' if tokens else '—'} | "
              f"{f'{minutes:.0f}' if minutes else '—'} | {v:.4f} | {h:.4f} |")

    with open(valid, encoding="utf-8") as f:
        text = f.read()
    folded = "".join(FOLD.get(c, c) for c in text)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "valid-folded.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(folded)
        print(f"\nTypographic characters ({sum(text.count(c) for c in FOLD)} of {len(text)} characters), bits per "
              "byte of the validation sample as published and with them folded to ASCII (fewer bytes):")
        print("| model | as published | folded | difference |")
        print("|---|---:|---:|---:|")
        for label, _, _, _, v, _, model, tokz in rows:
            fv = bits_per_byte(a.build, model, path, "all", tokz)
            print(f"| {label} | {v:.4f} | {fv:.4f} | {v - fv:+.4f} |")
    plot(rows, a.png)
    print(f"\nwrote {a.png}")
    return 0


def bpb_bars(ax, labels: list, valid: list, heldout: list, baseline: float, baseline_label: str) -> None:
    """Bits per byte on the validation sample and the held-out split, side by side per label,
    with a dashed line at `baseline`."""
    x = range(len(labels))
    ax.bar([i - 0.2 for i in x], valid, 0.4, label="tinystories-valid-sample.txt")
    ax.bar([i + 0.2 for i in x], heldout, 0.4, label="held-out split of tinystories-5k.txt")
    ax.axhline(baseline, color="gray", linestyle="--", linewidth=1, label=baseline_label)
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=15, ha="right", fontsize=8)
    ax.set_ylabel("bits per byte (lower is better)")
    ax.legend(fontsize=8)


def save_figure(fig, path: str) -> None:
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot(rows, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4), dpi=100)
    bpb_bars(ax, [r[0] for r in rows], [r[4] for r in rows], [r[5] for r in rows], rows[-1][4],
             "stories260K on the valid sample")
    ax.set_ylim(min(min(r[4], r[5]) for r in rows) * 0.9, max(max(r[4], r[5]) for r in rows) * 1.03)
    ax.set_title("Distillation from stories260K: what each step buys")
    save_figure(fig, path)


if __name__ == "__main__":
    sys.exit(main())
