"""Checks that a training text the trainer cannot use is a one-line error (ctest
`train_data_errors`): ``train.run --data FILE`` exits 1 with one ``train: error: --data FILE: ...``
line on stderr naming what is wrong, no traceback, and no output directory left behind.

    /usr/bin/python3 -m train.data_errors BUILD_DIR
"""
from __future__ import annotations

import contextlib
import io
import os
import random
import sys
import tempfile

from . import data, run
from .selftest import report_failures



def write(path: str, text: str | bytes) -> str:
    with open(path, "wb") as f:
        f.write(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def cases(tmp: str) -> list[tuple[str, str, str]]:
    """(name, --data path, a part of the message) per bad text."""
    # Texts made here: the test needs no shared/ (a fresh clone runs it).
    stories = [f"Once upon a time, in story {i}, a little cat found a red ball and played all day." for i in range(4)]
    sep = f"\n{data.SEPARATOR}\n"
    rng = random.Random(1)
    cjk = [''.join(chr(0x4E00 + rng.randrange(3000)) for _ in range(200)) for _ in range(60)]
    os.mkdir(os.path.join(tmp, "a-directory"))
    return [
        ("missing file", os.path.join(tmp, "missing.txt"), "no such file"),
        ("a directory", os.path.join(tmp, "a-directory"), "not a regular file"),
        ("not UTF-8", write(os.path.join(tmp, "latin1.txt"), "Once upon a time, caf\xe9.".encode("latin-1")),
         "not UTF-8 text (byte 0xE9 at offset 21)"),
        # Was a ZeroDivisionError: no story held out for validation.
        ("four stories", write(os.path.join(tmp, "four.txt"), sep.join(stories[:4])),
         "4 stories give 4 for training and 0 for validation"),
        # Was SentencePiece's "Vocabulary size too high" RuntimeError.
        ("100 short stories", write(os.path.join(tmp, "short.txt"),
                                    sep.join(f"Story {i}: the cat sat." for i in range(100))),
         "support at most"),
        # Was SentencePiece's "Vocabulary size is smaller than required_chars" RuntimeError.
        ("3000 distinct characters", write(os.path.join(tmp, "cjk.txt"), sep.join(cjk)), "need at least"),
    ]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 1
    build = argv[0]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, needle in cases(tmp):
            out_dir = os.path.join(tmp, "out")
            err, out = io.StringIO(), io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                    code = run.main(["smoke", "--data", path, "--out", out_dir, "--build", build])
            except BaseException as e:  # a traceback (or SystemExit from argparse) is the bug
                failures.append(f"{name}: raised {type(e).__name__}: {e}")
                continue
            lines = err.getvalue().splitlines()
            prefix = f"train: error: --data {path}: "
            if code != 1 or len(lines) != 1 or not lines[0].startswith(prefix) or needle not in lines[0]:
                failures.append(f"{name}: exit {code}, stderr {err.getvalue()!r} (expected one line starting "
                                f"{prefix!r} with {needle!r})")
            elif os.path.exists(out_dir):
                failures.append(f"{name}: left {out_dir} behind")
            else:
                print(f"data_errors: {name}: {lines[0]}")
    return report_failures("data_errors", failures)


if __name__ == "__main__":
    sys.exit(main())
