"""A distillation corpus made by pocketlm: stories sampled from a teacher model (stories260K,
Karpathy's model trained on all of TinyStories, MIT licence) with `pocketlm run --samples`,
one seed per story, each until the teacher's BOS; duplicates and broken stories dropped;
written with <|endoftext|> separators (the training text's format, train/data.py).

    /usr/bin/python3 -m train.distill [--tokens N] [--seed S] [-t T] [-p P] [--jobs J] [-o FILE]
    /usr/bin/python3 -m train.distill --measure     # the table that chose -t and -p

The corpus goes to runs/distill/ (git-ignored): it is generated text, never committed. For a
given seed, size, temperature and top-p it is the same file, byte for byte, whatever --jobs:
chunks of stories have fixed seeds and are kept in chunk order. The size counts the tokens the
teacher generated for the stories kept (its own 512-piece tokenizer).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time

from .data import SEPARATOR, shared_dir
from .evaluate import pocketlm_eval

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHUNK = 500  # stories per `pocketlm run --samples` call
# The teacher's own distribution, untruncated (docs/training.md, from `--measure`): lower
# temperatures and top-p narrow the stories (the teacher finds them far less surprising than
# real text: 0.79-1.12 against 1.54 nats/token); at 1.0 the remaining gap is the teacher's own
# distance from real text, which a higher temperature only hides with noise.
TEMPERATURE, TOP_P = 1.0, 1.0
_STATS = re.compile(r"generated (\d+) tokens")


def teacher_files() -> tuple[str, str]:
    models = os.path.join(shared_dir(), "models")
    return os.path.join(models, "stories260K.bin"), os.path.join(models, "tok512.bin")


def broken(story: str) -> bool:
    """A story cut short by the step limit (no closing punctuation), too short to be one, or
    holding a decoding replacement character."""
    s = story.rstrip()
    return len(s) < 100 or "\ufffd" in s or not s.endswith((".", "!", "?", '"', "\u201d", "'"))


def sample_chunk(build: str, start: int, count: int, seed: int, t: float, p: float,
                 steps: int = 512) -> tuple[list[str], int]:
    """Stories [start, start + count) of the corpus (story i has seed seed + i, so the corpus does
    not depend on how it is cut into chunks) and the tokens the teacher generated for them."""
    model, tok = teacher_files()
    r = subprocess.run([os.path.join(build, "pocketlm"), "run", model, "-z", tok, "-t", repr(t), "-p", repr(p),
                        "-s", str(seed + start), "-n", str(steps), "--samples", str(count)],
                       check=True, capture_output=True, text=True)
    m = _STATS.search(r.stderr)
    stories = [s.strip("\n") for s in r.stdout.split(f"\n{SEPARATOR}\n")]
    return stories, int(m.group(1)) if m else 0


class Progress:
    def __init__(self, total: int):
        self.total, self.start, self.tty = total, time.time(), sys.stderr.isatty()

    def update(self, done: int, kept: int, dropped: int) -> None:
        frac = min(1.0, done / self.total)
        elapsed = time.time() - self.start
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        line = (f"distill [{'#' * int(30 * frac)}{'-' * (30 - int(30 * frac))}] {done / 1e6:.2f}/{self.total / 1e6:.2f} "
                f"M tokens, {kept} stories kept, {dropped} dropped, {elapsed / 60:.1f} min, eta {eta / 60:.1f} min")
        sys.stderr.write(("\r" + line + "\x1b[K") if self.tty else line + "\n")
        sys.stderr.flush()


def make_corpus(build: str, tokens: int, seed: int, t: float, p: float, jobs: int) -> tuple[list[str], dict]:
    """The kept stories, in order, until they hold `tokens` teacher tokens, and the counts."""
    kept, seen = [], set()
    counts = {"tokens": 0, "generated": 0, "duplicates": 0, "broken": 0}
    progress = Progress(tokens)
    # A small corpus in small chunks (about 175 tokens a story, a sixth of them dropped). The
    # size depends on `tokens` alone: token counts are estimated per chunk, so the corpus must
    # not depend on --jobs.
    size = max(20, min(CHUNK, tokens // 600))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        pending, next_chunk = {}, 0
        chunk = 0
        while counts["tokens"] < tokens:
            while len(pending) < jobs:  # keep every job busy; results are taken in chunk order
                pending[next_chunk] = pool.submit(sample_chunk, build, next_chunk * size, size, seed, t, p)
                next_chunk += 1
            stories, generated = pending.pop(chunk).result()
            chunk += 1
            counts["generated"] += generated
            per_byte = generated / max(1, sum(len(s.encode()) for s in stories))
            for s in stories:
                if counts["tokens"] >= tokens:
                    break
                digest = hashlib.sha256(s.encode()).digest()
                if broken(s):
                    counts["broken"] += 1
                elif digest in seen:
                    counts["duplicates"] += 1
                else:
                    seen.add(digest)
                    kept.append(s)
                    counts["tokens"] += round(len(s.encode()) * per_byte)
            progress.update(counts["tokens"], len(kept), counts["broken"] + counts["duplicates"])
        for f in pending.values():
            f.cancel()
    sys.stderr.write("\n" if progress.tty else "")
    counts["stories"] = len(kept)
    return kept, counts


def write_corpus(stories: list[str], path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(f"\n{SEPARATOR}\n".join(stories) + f"\n{SEPARATOR}\n")
    os.replace(tmp, path)  # nothing half-written under the final name


def default_path(tokens: int, seed: int, t: float, p: float) -> str:
    return os.path.join(ROOT, "runs", "distill", f"stories260K-{tokens // 1000}k-t{t:g}-p{p:g}-s{seed}.txt")


def measure(build: str, stories: int = 1000) -> int:
    """Per setting, on `stories` stories: the teacher's cross-entropy on its own stories against
    its cross-entropy on the held-out split of the training text (the target: stories as
    surprising as real text, neither the flat ones of a low temperature nor noise), and the
    share kept, as a markdown table."""
    model, tok = teacher_files()
    _, real = pocketlm_eval(build, model, os.path.join(shared_dir(), "data", "tinystories-5k.txt"), "heldout", tok)
    target = float(real["cross-entropy"])
    print(f"teacher on the held-out split of tinystories-5k.txt: {target:.4f} nats/token")
    print("| temperature | top-p | teacher nats/token on its stories | difference | kept | duplicates |")
    print("|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for t, p in ((0.8, 0.9), (0.9, 0.9), (1.0, 0.9), (1.0, 0.95), (1.0, 1.0), (1.1, 1.0)):
            raw, _ = sample_chunk(build, 0, stories, 7, t, p)
            unique = list(dict.fromkeys(raw))
            good = [s for s in unique if not broken(s)]
            path = os.path.join(tmp, "s.txt")
            write_corpus(good, path)
            nats = float(pocketlm_eval(build, model, path, "all", tok)[1]["cross-entropy"])
            print(f"| {t:g} | {p:g} | {nats:.4f} | {nats - target:+.4f} | {len(good) / len(raw):.1%} | "
                  f"{len(raw) - len(unique)} |")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m train.distill", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=20_000_000, help="teacher tokens in the kept stories")
    ap.add_argument("--seed", type=int, default=1, help="seed of the first story (story i: seed + i)")
    ap.add_argument("-t", "--temperature", type=float, default=TEMPERATURE)
    ap.add_argument("-p", "--top-p", type=float, default=TOP_P)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="pocketlm processes at once")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("-o", "--output", help="default: runs/distill/stories260K-<K>k-t<T>-p<P>-s<S>.txt")
    ap.add_argument("--measure", action="store_true", help="print the table that chooses -t and -p, and stop")
    a = ap.parse_args(argv)
    for path in teacher_files():
        if not os.path.exists(path):
            print(f"distill: error: {path}: no such file (the teacher comes with ../shared or $POCKETLM_SHARED)",
                  file=sys.stderr)
            return 1
    if a.tokens <= 0 or a.jobs <= 0 or a.seed <= 0:
        print("distill: error: --tokens, --jobs and --seed must be positive", file=sys.stderr)
        return 1
    if a.measure:
        return measure(a.build)
    out = a.output or default_path(a.tokens, a.seed, a.temperature, a.top_p)
    stories, c = make_corpus(a.build, a.tokens, a.seed, a.temperature, a.top_p, a.jobs)
    write_corpus(stories, out)
    print(f"distill: {out}: {c['stories']} stories, {c['tokens'] / 1e6:.2f} M teacher tokens; dropped "
          f"{c['broken']} broken and {c['duplicates']} duplicate stories")
    return 0


if __name__ == "__main__":
    sys.exit(main())
