"""Checks that a training text the trainer cannot use is a one-line error (ctest
`train_data_errors`): ``train.run --data FILE`` exits 1 with one ``train: error: --data FILE: ...``
line on stderr naming what is wrong, no traceback, and no output directory left behind. So are a
bad ``--steps`` or ``--time-budget`` and a ``--resume`` without a checkpoint (before any work).
Ctrl-C is one line and exit 130: before training, with the output directory removed; during
training (a real SIGINT to the smoke recipe on a small text made here), with the checkpoint saved,
from which ``--resume`` ends with the weights of an uninterrupted run.

    /usr/bin/python3 -m train.data_errors BUILD_DIR
"""
from __future__ import annotations

import contextlib
import io
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import torch

from . import data, run
from .selftest import report_failures

# Words of the parity prompts (train/parity.py) among others: a tokenizer trained on the stories
# of story_text() encodes each prompt in few enough ids for its 64 steps in the smoke context.
WORDS = ("once upon a time there was little girl named Lily and boy Ben they went to the park saw big red ball "
         "dog cat was sad because Tom had happy played ran jumped found home mom dad said friend blue green small "
         "bird fish boat water tree sun sky day night sleep bed toy box car truck cake apple garden flower rain "
         "wind house door window school teacher book story laugh smile cry help share kind brave funny fast slow "
         "loud quiet warm cold yellow purple orange pink white black brown soft hard shiny new old best every one "
         "two three many some all with on in under over near far away back up down out of for from but so then "
         "when she he it we you I her his their our my your very not too also again always never together").split()


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


def story_text(n: int = 200, seed: int = 1) -> str:
    """``n`` stories of random sentences of WORDS: enough for the smoke recipe's 512 pieces and
    seconds of tokenizer training, where tinystories-5k.txt (in ../shared only) takes longer."""
    rng = random.Random(seed)

    def sentence():
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12))).capitalize() + "."

    return f"\n{data.SEPARATOR}\n".join(" ".join(sentence() for _ in range(rng.randint(4, 8))) for _ in range(n))


def trainer(build: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "train.run", "smoke", "--build", build, *args]


def flag_cases(out: str) -> list[tuple[str, list[str], str]]:
    """(name, arguments, the start of the one error line) per bad flag."""
    return [
        # Was a ZeroDivisionError in the learning-rate schedule.
        ("--steps -5", ["--steps", "-5"], "train: error: --steps -5: must be a positive whole number of steps"),
        # Was the recipe's 300 steps (0 is falsy).
        ("--steps 0", ["--steps", "0"], "train: error: --steps 0: must be a positive whole number of steps"),
        # Was argparse's usage and exit 2.
        ("--steps abc", ["--steps", "abc"], "train: error: --steps abc: must be a positive whole number of steps"),
        ("--time-budget -1", ["--time-budget", "-1"], "train: error: --time-budget -1: must be a finite number"),
        # Was a run from scratch, silently.
        ("--resume without a checkpoint", ["--resume"],
         f"train: error: --resume: {os.path.join(out, 'ckpt.pt')}: no such file"),
    ]


def check_flags(build: str, text: str, tmp: str, failures: list[str]) -> None:
    """Each bad flag with a --data text that trains, so that only the flag is wrong, and an --out
    that must not appear (the check comes before any work)."""
    out = os.path.join(tmp, "fresh")
    for name, args, prefix in flag_cases(out):
        r = subprocess.run(trainer(build, "--data", text, "--out", out, *args), cwd=run.ROOT, capture_output=True,
                           text=True, timeout=120)
        lines, made = r.stderr.splitlines(), os.path.exists(out)
        if made:  # for the next case
            shutil.rmtree(out)
        if r.returncode != 1 or len(lines) != 1 or not lines[0].startswith(prefix) or r.stdout:
            failures.append(f"{name}: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r} (expected exit 1, "
                            f"nothing on stdout, one line starting {prefix!r})")
        elif made:
            failures.append(f"{name}: made {out} (work before the check)")
        else:
            print(f"data_errors: {name}: {lines[0]}")


def check_interrupt_before_training(build: str, text: str, tmp: str, failures: list[str]) -> None:
    """Ctrl-C in the tokenizer's training (a KeyboardInterrupt from make_tokenizer, after it wrote
    into the output directory): one line, 130, the new directory removed."""
    out = os.path.join(tmp, "early")

    def interrupted(a, margs, stories, val_text, out_dir):
        open(os.path.join(out_dir, "tok512.model"), "w").close()
        raise KeyboardInterrupt

    real, run.make_tokenizer = run.make_tokenizer, interrupted
    err, stdout = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(stdout):
            code = run.main(["smoke", "--data", text, "--out", out, "--build", build])
    except BaseException as e:
        failures.append(f"Ctrl-C before training: raised {type(e).__name__}: {e}")
        return
    finally:
        run.make_tokenizer = real
    if code != 130 or err.getvalue() != "train: interrupted\n" or os.path.exists(out):
        failures.append(f"Ctrl-C before training: exit {code}, stderr {err.getvalue()!r}, {out} "
                        f"{'left behind' if os.path.exists(out) else 'removed'} (expected 130, 'train: interrupted', "
                        "removed)")
    else:
        print("data_errors: Ctrl-C before training: train: interrupted")


def read_until(stream, needle: bytes, seconds: float) -> bytes:
    """What ``stream`` (a pipe) gives until ``needle`` appears, the pipe closes or time runs out."""
    got, deadline = b"", time.time() + seconds
    while needle not in got:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.time()))
        chunk = os.read(stream.fileno(), 65536) if ready else b""
        if not chunk:
            break
        got += chunk
    return got


def check_interrupt(build: str, text: str, tmp: str, failures: list[str]) -> None:
    """SIGINT to the smoke recipe once its first step is done: exit 130, one line naming the step
    and ckpt.pt, no traceback; --resume from there gives the weights of an uninterrupted run."""
    out, ref, steps = os.path.join(tmp, "interrupted"), os.path.join(tmp, "uninterrupted"), "60"
    ckpt = os.path.join(out, "ckpt.pt")
    # SIG_DFL in the child: a shell's background job inherits SIGINT ignored, which the trainer respects.
    p = subprocess.Popen(trainer(build, "--data", text, "--out", out, "--steps", steps), cwd=run.ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    err = read_until(p.stderr, b"train [", 60)  # the progress line of step 1
    p.send_signal(signal.SIGINT)
    try:
        stdout, rest = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        failures.append("Ctrl-C in training: the trainer still ran 120 s after SIGINT")
        return
    stdout, err = stdout.decode(), (err + rest).decode()
    lines = [l for l in err.splitlines() if not l.startswith("train [")]
    m = re.fullmatch(rf"train: interrupted at step (\d+); checkpoint saved to {re.escape(ckpt)} \(continue with "
                     r"--resume\)", lines[0]) if len(lines) == 1 else None
    if p.returncode != 130 or not m or "Traceback" in stdout + err:
        failures.append(f"Ctrl-C in training: exit {p.returncode}, stderr {err!r} (expected 130 and one line "
                        f"'train: interrupted at step N; checkpoint saved to {ckpt} (continue with --resume)')")
        return
    step = int(m.group(1))
    saved = torch.load(ckpt, map_location="cpu")["step"] if os.path.isfile(ckpt) else None
    if saved != step or not 0 < step < int(steps):
        failures.append(f"Ctrl-C in training: said step {step}, {ckpt} holds step {saved} (expected the same, "
                        f"between 1 and {int(steps) - 1})")
        return
    print(f"data_errors: Ctrl-C in training: {lines[0]}")
    resumed = subprocess.run(trainer(build, "--data", text, "--out", out, "--steps", steps, "--resume"),
                             cwd=run.ROOT, capture_output=True, text=True, timeout=120)
    whole = subprocess.run(trainer(build, "--data", text, "--out", ref, "--steps", steps),
                           cwd=run.ROOT, capture_output=True, text=True, timeout=120)
    said = f"resumed from {ckpt} at step {step}"
    if resumed.returncode != 0 or said not in resumed.stdout or whole.returncode != 0:
        failures.append(f"--resume after Ctrl-C: exit {resumed.returncode}, stderr {resumed.stderr[-2000:]!r} "
                        f"(expected 0 and {said!r}); the uninterrupted run: exit {whole.returncode}")
        return
    with open(os.path.join(out, "model.bin"), "rb") as f, open(os.path.join(ref, "model.bin"), "rb") as g:
        same = f.read() == g.read()
    if not same:
        failures.append(f"--resume after Ctrl-C at step {step}: model.bin differs from an uninterrupted run's")
    else:
        print(f"data_errors: --resume after Ctrl-C: {said}; model.bin after {steps} steps equals an uninterrupted "
              "run's")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 1
    build = os.path.abspath(argv[0])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        text = write(os.path.join(tmp, "stories.txt"), story_text())
        check_flags(build, text, tmp, failures)
        check_interrupt_before_training(build, text, tmp, failures)
        check_interrupt(build, text, tmp, failures)
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
