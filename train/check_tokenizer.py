"""pocketlm's encoder against SentencePiece: the ids of every validation story must be equal.

    /usr/bin/python3 -m train.check_tokenizer SP_MODEL MODEL TOKENIZER.bin|- BUILD_DIR [TEXT]

MODEL gives pocketlm the vocabulary size (any model of that vocabulary); TEXT defaults to
../shared/data/tinystories-5k.txt, whose held-out stories are checked.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from . import data
from .tokenizer import BOS_ID, load


def check(sp_model: str, model: str, tokenizer: str, build: str, stories: list[str]) -> bool:
    sp = load(sp_model)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write(f"\n{data.SEPARATOR}\n".join(stories) + "\n")
        path = f.name
    try:
        out = subprocess.run([os.path.join(build, "pocketlm-probe"), "encode", model, tokenizer, path],
                             check=True, capture_output=True, text=True).stdout.split("\n")
    finally:
        os.unlink(path)
    bad = 0
    for i, story in enumerate(stories):
        ours = [int(v) for v in out[i].split()]
        theirs = [BOS_ID] + sp.encode(story)
        if ours != theirs:
            bad += 1
            if bad <= 3:
                first = next((j for j, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
                print(f"tokenizer: story {i}: ids part at {first}: pocketlm {ours[first:first + 8]}, "
                      f"SentencePiece {theirs[first:first + 8]} ({sp.id_to_piece(theirs[first:first + 8])})",
                      file=sys.stderr)
    tokens = sum(len(sp.encode(s)) + 1 for s in stories)
    print(f"tokenizer: {len(stories) - bad} of {len(stories)} stories ({tokens} ids) encode to the same ids "
          f"in pocketlm and SentencePiece")
    return bad == 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 1
    text = argv[4] if len(argv) == 5 else os.path.join(os.path.dirname(__file__), "../../shared/data/tinystories-5k.txt")
    _, val = data.load_split(text)
    return 0 if check(argv[0], argv[1], argv[2], argv[3], val) else 1


if __name__ == "__main__":
    sys.exit(main())
