"""Stories of a training text, the fixed 95/5 split, and token batches.

The split is the one `pocketlm eval` uses (apps/pocketlm/story_split.h): the text is cut into
stories at lines holding only ``<|endoftext|>``; story i (0-based, file order) is held out when
``SplitMix64(seed + i).next() % 100 >= 95`` (seed 42 by default). Both sides must agree, so any
change here is a change there too (train/selftest.py, the ctest train_selftest, checks the split against pocketlm's).
"""
from __future__ import annotations

import os

import numpy as np
import torch

SEPARATOR = "<|endoftext|>"


def shared_dir() -> str:
    """The shared material: $POCKETLM_SHARED, else ../shared beside the checkout (as for the tests)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get("POCKETLM_SHARED") or os.path.join(root, "../shared")
DEFAULT_SPLIT_SEED = 42
_MASK64 = (1 << 64) - 1


def splitmix64_first(seed: int) -> int:
    """The first output of SplitMix64 seeded with ``seed`` (all arithmetic mod 2^64)."""
    z = (seed + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def is_heldout(index: int, seed: int = DEFAULT_SPLIT_SEED) -> bool:
    """Whether story ``index`` belongs to the held-out 5 % (the validation set)."""
    return splitmix64_first((seed + index) & _MASK64) % 100 >= 95


def split_stories(text: str) -> list[str]:
    """The stories of ``text``: what lies between separator lines, without the newlines (and
    carriage returns) that border it; empty stories are dropped."""
    stories, current = [], []

    def flush():
        story = "\n".join(current).strip("\r\n")
        if story:
            stories.append(story)
        current.clear()

    for line in text.split("\n"):
        if line.rstrip("\r") == SEPARATOR:
            flush()
        else:
            current.append(line)
    flush()
    return stories


def load_split(path: str, seed: int = DEFAULT_SPLIT_SEED) -> tuple[list[str], list[str]]:
    """(train, validation) stories of the UTF-8 file at ``path``."""
    with open(path, encoding="utf-8", newline="") as f:
        stories = split_stories(f.read())
    train = [s for i, s in enumerate(stories) if not is_heldout(i, seed)]
    val = [s for i, s in enumerate(stories) if is_heldout(i, seed)]
    return train, val


class DataError(Exception):
    """A training text the trainer cannot use; ``str()`` is the one-line message for the user."""


def min_stories(seed: int = DEFAULT_SPLIT_SEED) -> int:
    """The fewest stories that give both sides of the split a story: one past the first held-out
    index (39 for seed 42), and at least 2."""
    first = next(i for i in range(1 << 20) if is_heldout(i, seed))
    return max(first + 1, 2)


def load_checked(path: str, flag: str = "--data", seed: int = DEFAULT_SPLIT_SEED) -> tuple[list[str], list[str]]:
    """load_split() of a text checked first, every problem a DataError naming ``flag`` and
    ``path``: a missing or non-regular file, bytes that are not UTF-8, and a split with no
    training or no validation story (a short text: 5 % are held out, so the first held-out story
    is story 38)."""
    if not os.path.exists(path):
        raise DataError(f"{flag} {path}: no such file (the default text, TinyStories' tinystories-5k.txt, comes only with ../shared: docs/sources.md)")
    if not os.path.isfile(path):
        raise DataError(f"{flag} {path}: not a regular file")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise DataError(f"{flag} {path}: not UTF-8 text (byte 0x{e.object[e.start]:02X} at offset {e.start})") from None
    except OSError as e:
        raise DataError(f"{flag} {path}: cannot read: {e.strerror}") from None
    stories = split_stories(text)
    train = [s for i, s in enumerate(stories) if not is_heldout(i, seed)]
    val = [s for i, s in enumerate(stories) if is_heldout(i, seed)]
    if not train or not val:
        raise DataError(f"{flag} {path}: {len(stories)} {'story' if len(stories) == 1 else 'stories'} give "
                        f"{len(train)} for training and {len(val)} for validation; about 1 in 20 is held out "
                        f"(split seed {seed}), so a text needs at least {min_stories(seed)} stories, separated by "
                        f"lines holding only {SEPARATOR}")
    return train, val


def encode_stories(encode, stories: list[str], bos_id: int = 1) -> list[np.ndarray]:
    """Each story as ``pocketlm run``/``eval`` encode a prompt: BOS, then the SentencePiece ids
    (which begin with the dummy-prefix space). ``encode(str) -> list[int]``."""
    return [np.array([bos_id] + encode(s), dtype=np.int64) for s in stories]


class BatchSampler:
    """Random training windows from the concatenated stories.

    ``sample()`` returns (x, y), both int64 [batch, seq_len]: y is x shifted by one token. Window
    starts come from a torch.Generator seeded with ``seed``, so a run is repeatable.
    """

    def __init__(self, stories: list[np.ndarray], batch_size: int, seq_len: int, seed: int):
        self.tokens = torch.from_numpy(np.concatenate(stories))
        self.batch_size, self.seq_len = batch_size, seq_len
        self.generator = torch.Generator().manual_seed(seed)
        if len(self.tokens) <= seq_len + 1:
            raise ValueError(f"training text has {len(self.tokens)} tokens, fewer than a window of {seq_len + 1}")

    def sample(self) -> tuple[torch.Tensor, torch.Tensor]:
        starts = torch.randint(0, len(self.tokens) - self.seq_len - 1, (self.batch_size,), generator=self.generator)
        offsets = torch.arange(self.seq_len + 1)
        windows = self.tokens[starts[:, None] + offsets[None, :]]
        return windows[:, :-1].contiguous(), windows[:, 1:].contiguous()

    def state(self) -> torch.Tensor:
        return self.generator.get_state()

    def restore(self, state: torch.Tensor) -> None:
        self.generator.set_state(state)
