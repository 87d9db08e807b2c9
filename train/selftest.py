"""Checks that the trainer and pocketlm agree on what does not need training (ctest
`train_selftest`): the held-out split, the cutting of a text into stories, GGUF export (the
trainer's writer, driven by the engine's schema, gives the bytes of `pocketlm convert`), and a
per-layer-embedding model's forward pass (PyTorch and pocketlm: the same 64 greedy tokens on
four prompts, logits within 1e-4 of their largest magnitude).

    /usr/bin/python3 -m train.selftest MODEL.gguf BUILD_DIR
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

from . import data, distill, export, gguf, parity
from . import schema as schema_mod
from .model import ModelArgs, Transformer

TRICKY = ("\n\nFirst story.\r\nSecond line.\n<|endoftext|>\n<|endoftext|>\r\n\nSecond  story, two spaces.\n\n"
          "<|endoftext|>\n <|endoftext|> is not a separator here\n<|endoftext|>\nLast, with no newline")


def report_failures(check: str, failures: list[str]) -> int:
    """Prints each failure of the named check to stderr; the exit code (1 if any, else 0)."""
    for m in failures:
        print(f"{check}: FAIL {m}", file=sys.stderr)
    return 1 if failures else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    model, build = argv
    probe = os.path.join(build, "pocketlm-probe")
    failures = []
    for seed in (42, 7, 2**64 - 1):
        ours = [i for i in range(10000) if data.is_heldout(i, seed)]
        out = subprocess.run([probe, "heldout", "10000", str(seed)], check=True, capture_output=True, text=True)
        theirs = [int(v) for v in out.stdout.split()]
        if ours != theirs:
            failures.append(f"held-out split, seed {seed}: Python takes {len(ours)} stories, pocketlm {len(theirs)}")
        else:
            print(f"selftest: seed {seed}: the same {len(ours)} of 10000 stories held out")
    stories = data.split_stories(TRICKY)
    with tempfile.TemporaryDirectory() as tmp:
        whole, joined = os.path.join(tmp, "whole.txt"), os.path.join(tmp, "joined.txt")
        with open(whole, "w", newline="") as f:
            f.write(TRICKY)
        with open(joined, "w", newline="") as f:
            f.write(f"\n{data.SEPARATOR}\n".join(stories))

        def encode(path):
            return subprocess.run([probe, "encode", model, "-", path], check=True, capture_output=True,
                                  text=True).stdout.splitlines()

        a, b = encode(whole), encode(joined)
    if len(stories) != len(a) or a != b:
        failures.append(f"stories: Python cuts {len(stories)}, pocketlm {len(a)}; ids equal: {a == b}")
    else:
        print(f"selftest: the same {len(stories)} stories cut from a text with CRLF, empty and unseparated parts")
    failures += check_export(model, build)
    failures += check_distill(build)
    failures += check_ple_parity(model, build)
    return report_failures("selftest", failures)


@torch.no_grad()
def random_weights(model: Transformer, seed: int) -> None:
    """Weights whose logits are well apart (greedy choices are not near-ties): matrices
    N(0, 1) / sqrt(columns) * 1.5, norms 1 + U(-1/4, 1/4)."""
    g = torch.Generator().manual_seed(seed)
    for _, p in sorted(model.named_parameters()):
        if p.dim() == 1:
            p.copy_(1 + (torch.rand(p.shape, generator=g) - 0.5) / 2)
        else:
            p.copy_(torch.randn(p.shape, generator=g) * (1.5 / p.shape[1] ** 0.5))


def check_ple_parity(model: str, build: str) -> list[str]:
    """A per-layer-embedding model with random weights (dim 64, 2 layers, P 32, the shipped
    model's 512 pieces), written by the trainer, run by PyTorch and pocketlm."""
    meta, _ = gguf.read_gguf(model)
    vocab = gguf.Vocab.from_gguf(meta)
    ple = Transformer(ModelArgs(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=len(vocab.pieces),
                                hidden_dim=96, seq_len=128, per_layer_dim=32))
    random_weights(ple, 5)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ple.gguf")
        export.write_gguf(ple, path, schema_mod.load(build), vocab, "ple-parity")
        if not parity.check(path, build, steps=64, rtol=1e-4):
            return ["ple: PyTorch and pocketlm differ on a pocketlm-ple model (above)"]
    return []


def check_distill(build: str) -> list[str]:
    """The distillation corpus does not depend on how many pocketlm processes make it."""
    if not all(os.path.exists(f) for f in distill.teacher_files()):
        print(f"selftest: distill: skipped, {distill.teacher_files()[0]} is missing (it comes with ../shared)")
        return []
    one, _ = distill.make_corpus(build, 3000, 11, distill.TEMPERATURE, distill.TOP_P, 1)
    two, counts = distill.make_corpus(build, 3000, 11, distill.TEMPERATURE, distill.TOP_P, 2)
    if one != two or not one:
        return [f"distill: {len(one)} stories with 1 job, {len(two)} with 2, equal: {one == two}"]
    print(f"selftest: distill: the same {len(one)} stories of stories260K with 1 and 2 jobs "
          f"({counts['broken']} broken dropped)")
    return []


def check_export(model: str, build: str) -> list[str]:
    """The model read into PyTorch and written back by the trainer's GGUF writer is byte for byte
    what `pocketlm convert MODEL --to gguf` writes."""
    schema = schema_mod.load(build)
    meta, _ = gguf.read_gguf(model)
    torch_model = gguf.load_model(model, schema)
    name = os.path.splitext(os.path.basename(model))[0]
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = os.path.join(tmp, "trainer.gguf"), os.path.join(tmp, "convert.gguf")
        export.write_gguf(torch_model, ours, schema, gguf.Vocab.from_gguf(meta), name, meta["general.architecture"])
        subprocess.run([os.path.join(build, "pocketlm"), "convert", model, "--to", "gguf", "-o", theirs], check=True,
                       capture_output=True)
        with open(ours, "rb") as f:
            a = f.read()
        with open(theirs, "rb") as f:
            b = f.read()
    if a != b:
        first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return [f"export: the trainer's GGUF ({len(a)} bytes) and convert's ({len(b)} bytes) differ from byte {first}"]
    print(f"selftest: the trainer's GGUF writer gives convert's {len(a)} bytes")
    return []


if __name__ == "__main__":
    sys.exit(main())
