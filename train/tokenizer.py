"""SentencePiece BPE tokenizer with byte fallback, trained as llama2.c trains its small
vocabularies, and written as a llama2.c ``tokenizer.bin``.

pocketlm's encoder (llama2.c's: a dummy-prefix space, one piece per code point or its bytes,
then greedy merges by score) gives the ids SentencePiece gives when the model has:
byte fallback (ids 3..258 are <0x00>..<0xFF>), no normalisation (rule ``identity``), no
collapsing of repeated spaces (``remove_extra_whitespaces=False``) and digits split. The test
train/check_tokenizer.py (make train-smoke) checks that on every validation story.
"""
from __future__ import annotations

import os
import re
import struct
import tempfile

import sentencepiece as spm

UNK_ID, BOS_ID, EOS_ID = 0, 1, 2


class VocabularyUnfit(ValueError):
    """The text cannot give ``requested`` pieces: with ``too_large``, BPE finds at most ``limit``
    (too little text); else its distinct characters alone need ``limit`` (too many of them)."""

    def __init__(self, requested: int, limit: int, too_large: bool):
        super().__init__(f"vocab_size {requested}: the text {'supports at most' if too_large else 'needs at least'} "
                         f"{limit} pieces")
        self.requested, self.limit, self.too_large = requested, limit, too_large


def train_tokenizer(stories: list[str], vocab_size: int, model_prefix: str, seed_sentences: int = 0) -> str:
    """Trains a BPE model of ``vocab_size`` pieces on ``stories``; returns the .model path.

    Each story's lines are training sentences (SentencePiece reads lines). Deterministic for a
    given input: SentencePiece's BPE trainer uses no randomness when every sentence is read
    (``input_sentence_size=0``). A text that cannot give ``vocab_size`` pieces raises
    VocabularyUnfit with the bound: only SentencePiece's trainer knows it (the merges its BPE
    finds, the characters it must keep), so it is read from its error.
    """
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        for story in stories:
            f.write(story + "\n")
        text_path = f.name
    try:
        spm.SentencePieceTrainer.train(
            input=text_path,
            model_prefix=model_prefix,
            model_type="bpe",
            vocab_size=vocab_size,
            self_test_sample_size=0,
            input_format="text",
            character_coverage=1.0,
            num_threads=2,
            split_digits=True,
            allow_whitespace_only_pieces=True,
            byte_fallback=True,
            unk_surface=r" \342\201\207 ",
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            add_dummy_prefix=True,
            input_sentence_size=0,
            max_sentence_length=16384,
            unk_id=UNK_ID, bos_id=BOS_ID, eos_id=EOS_ID, pad_id=-1,
            minloglevel=2,
        )
    except RuntimeError as e:
        m = re.search(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)", str(e))
        if m:
            raise VocabularyUnfit(int(m.group(1)), int(m.group(2)), too_large=True) from None
        m = re.search(r"Vocabulary size is smaller than required_chars\. (\d+) vs (\d+)", str(e))
        if m:
            raise VocabularyUnfit(int(m.group(1)), int(m.group(2)), too_large=False) from None
        raise
    finally:
        os.unlink(text_path)
    return model_prefix + ".model"


def load(model_path: str) -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_file=model_path)


def pieces_for_llama2c(sp: spm.SentencePieceProcessor) -> list[tuple[bytes, float]]:
    """(piece bytes, score) per id as llama2.c's tokenizer.bin spells them: U+2581 is a space,
    BOS and EOS are "\\n<s>\\n" and "\\n</s>\\n", byte pieces stay the text "<0xHH>"."""
    out = []
    for i in range(sp.get_piece_size()):
        piece = sp.id_to_piece(i)
        if i == BOS_ID:
            piece = "\n<s>\n"
        elif i == EOS_ID:
            piece = "\n</s>\n"
        out.append((piece.replace("\u2581", " ").encode("utf-8"), float(sp.get_score(i))))
    return out


def gguf_vocab(sp: spm.SentencePieceProcessor):
    """The vocabulary as GGUF holds it (train/gguf.py: Vocab): SentencePiece's own pieces (U+2581
    for spaces), scores, and token types from SentencePiece's flags."""
    from .gguf import TOKEN_BYTE, TOKEN_CONTROL, TOKEN_NORMAL, TOKEN_UNKNOWN, Vocab

    def kind(i):
        if sp.is_control(i):
            return TOKEN_CONTROL
        if sp.is_unknown(i):
            return TOKEN_UNKNOWN
        return TOKEN_BYTE if sp.is_byte(i) else TOKEN_NORMAL

    n = sp.get_piece_size()
    return Vocab([sp.id_to_piece(i) for i in range(n)], [float(sp.get_score(i)) for i in range(n)],
                 [kind(i) for i in range(n)], BOS_ID, EOS_ID)


def write_tokenizer_bin(sp: spm.SentencePieceProcessor, path: str) -> None:
    """llama2.c's tokenizer.bin: int32 max piece length, then per id: float32 score, int32
    byte length, the bytes."""
    pieces = pieces_for_llama2c(sp)
    with open(path, "wb") as f:
        f.write(struct.pack("<i", max(len(b) for b, _ in pieces)))
        for b, score in pieces:
            f.write(struct.pack("<fi", score, len(b)))
            f.write(b)
