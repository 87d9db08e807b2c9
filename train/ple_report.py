"""The per-layer-embedding ablation (docs/ple.md): the same core, data, seed and steps without PLE
and with per_layer_dim 32, 64 and 128, and the largest one's per-layer table in F32, Q8_0 and
Q4_0; for each, bits per byte with `pocketlm eval` on TinyStories' own validation text
(tinystories-valid-sample.txt, whole) and on the held-out split of the training text, decode
tok/s (`pocketlm bench`, 1 thread, greedy) and the bytes of one table row (what a token reads
from flash when the table stays there). Prints a markdown table and writes a PNG.

    /usr/bin/python3 -m train.ple_report [RECIPE...] [--png FILE] [--build DIR]

The recipes' runs are runs/RECIPE/ (train/run.py); default: ple-none ple32 ple64 ple128.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from .data import shared_dir
from .evaluate import pocketlm_eval
from .report import bpb_bars, save_figure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECIPES = ["ple-none", "ple32", "ple64", "ple128"]
# Bytes per value of a table row in each GGUF type (blocks of 32 values: 34 and 18 bytes).
ROW_BYTES_PER_VALUE = {"f32": 4.0, "q8_0": 34 / 32, "q4_0": 18 / 32}


def bits_per_byte(build: str, model: str, text: str, split: str) -> float:
    return float(pocketlm_eval(build, model, text, split)[1]["bits per byte"])


def decode_tok_per_s(build: str, model: str) -> float:
    out = subprocess.run([os.path.join(build, "pocketlm"), "bench", model, "--json", "-n", "256", "--repeats", "5"],
                         check=True, capture_output=True, text=True).stdout
    return float(json.loads(out)["decode_tok_per_s"])


def measure(build: str, label: str, model: str, summary: dict, table: str | None) -> dict:
    data = os.path.join(shared_dir(), "data")
    a = summary["model"]
    p = a.get("per_layer_dim", 0)
    return {"label": label, "params": summary["params"], "tokens": summary["tokens"],
            "minutes": summary["train_minutes"], "P": p, "table": table,
            "valid": bits_per_byte(build, model, os.path.join(data, "tinystories-valid-sample.txt"), "all"),
            "heldout": bits_per_byte(build, model, os.path.join(data, "tinystories-5k.txt"), "heldout"),
            "tok_s": decode_tok_per_s(build, model),
            "row_bytes": round(a["n_layers"] * p * ROW_BYTES_PER_VALUE[table]) if p else 0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m train.ple_report", description=__doc__.split("\n\n")[0])
    ap.add_argument("recipes", nargs="*", default=RECIPES)
    ap.add_argument("--png", default=os.path.join(ROOT, "docs", "ple-ablation.png"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in a.recipes:
            with open(os.path.join(ROOT, "runs", r, "summary.json")) as f:
                s = json.load(f)
            model = os.path.join(ROOT, "runs", r, "model.gguf")
            p = s["model"].get("per_layer_dim", 0)
            rows.append(measure(a.build, r, model, s, "f32" if p else None))
            if r != a.recipes[-1] or not p:
                continue
            for t in ("q8_0", "q4_0"):  # the largest table, quantized alone
                q = os.path.join(tmp, f"{r}-{t}.gguf")
                subprocess.run([os.path.join(a.build, "pocketlm"), "convert", model, "--to", "gguf", "--tensor-type",
                                f"ple_table={t}", "-o", q], check=True, capture_output=True)
                rows.append(measure(a.build, f"{r}, table {t}", q, s, t))
    print("| model | P | parameters | tokens | minutes | bits/byte, valid sample | bits/byte, held-out | "
          "decode tok/s | table row, bytes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['label']} | {r['P'] or '—'} | {r['params']:,} | {r['tokens'] / 1e6:.1f} M | {r['minutes']:.1f} | "
              f"{r['valid']:.4f} | {r['heldout']:.4f} | {r['tok_s']:,.0f} | {r['row_bytes'] or '—'} |")
    base = rows[0]
    best = min(rows[1:], key=lambda r: r["valid"]) if len(rows) > 1 else base
    verdict = "lowers" if best["valid"] < base["valid"] else "does not lower"
    print(f"\nAt equal core compute, data, seed and steps, PLE {verdict} the validation sample's bits per byte: "
          f"{base['label']} {base['valid']:.4f}, best {best['label']} {best['valid']:.4f} "
          f"({best['valid'] - base['valid']:+.4f}).")
    plot(rows, a.png)
    print(f"wrote {a.png}")
    return 0


def plot(rows, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), dpi=100, gridspec_kw={"width_ratios": [3, 2]})
    x = range(len(rows))
    bpb_bars(ax, [r["label"] for r in rows], [r["valid"] for r in rows], [r["heldout"] for r in rows], rows[0]["valid"],
             "no PLE, valid sample")
    lo = min(min(r["valid"], r["heldout"]) for r in rows)
    hi = max(max(r["valid"], r["heldout"]) for r in rows)
    ax.set_ylim(lo - (hi - lo) * 0.5 - 0.01, hi + (hi - lo) * 0.2 + 0.01)
    ax.set_title("Per-layer embeddings on the same core, data and steps")
    bx.bar(list(x), [r["tok_s"] for r in rows], color="tab:green")
    bx.set_xticks(list(x))
    bx.set_xticklabels([r["label"] for r in rows], rotation=15, ha="right", fontsize=8)
    bx.set_ylabel("decode tok/s (1 thread, this machine)")
    bx.set_title("Speed")
    save_figure(fig, path)


if __name__ == "__main__":
    sys.exit(main())
