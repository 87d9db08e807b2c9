"""The Python binding against the built shared library ($POCKETLM_LIBRARY) and CLI
($POCKETLM_BINARY): the CLI's text for the same settings, the plan as data, chat turns, errors."""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pocketlm  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
MODEL = os.path.join(ROOT, "assets", "stories1M.gguf")
BINARY = os.environ.get("POCKETLM_BINARY", os.path.join(ROOT, "build", "pocketlm"))


def cli(*args, stdin=None):
    r = subprocess.run([BINARY, *args], input=stdin, capture_output=True, text=True, check=True)
    return r.stdout


def test_generate_is_the_clis_text():
    want = cli("run", MODEL, "-t", "0.8", "-p", "0.9", "-s", "42", "-n", "48", "-i", "Once upon a time")
    with pocketlm.Model(MODEL) as m:
        got = "".join(m.generate("Once upon a time", steps=48, temperature=0.8, topp=0.9, seed=42))
    assert got == want.rstrip("\n")
    assert len(got) > 40


def test_plan_is_a_dict_of_the_tiers():
    with pocketlm.Model(MODEL, seq_len=64) as m:
        p = m.plan()
        assert p["fits"] and p["seq_len"] == 64 and m.seq_len == 64 and m.vocab_size == 512
        assert p["tiers"][0]["name"] == "ram" and p["tiers"][0]["bytes"] == p["ram_bytes"] > 0
        assert p["tiers"][-1]["storage"]


def test_chat_turns_are_pocketlm_chats():
    messages = ["Once upon a time", "The dog ran home"]
    out = cli("chat", MODEL, "-t", "0", "-n", "24", stdin="".join(x + "\n" for x in messages))
    with pocketlm.Model(MODEL, chat=True) as m:
        m.chat_begin(temperature=0, max_reply=24)
        replies = ["".join(m.chat_turn(x)) for x in messages]
    expected = "".join(f"User: {x}\nAssistant: {r}\n" for x, r in zip(messages, replies))
    assert out.startswith(expected)


def test_errors_carry_the_message_and_status():
    with pocketlm.Model(MODEL) as m:
        with pytest.raises(pocketlm.Error) as e:
            list(m.generate("Once upon a time", steps=100000))
        assert e.value.status == 1 and "steps = 100000 is outside [1, 256]" in str(e.value)
        with pytest.raises(pocketlm.Error) as e:
            m.chat_begin()
        assert e.value.status == 7 and "without config.chat = 1" in str(e.value)
    with pytest.raises(pocketlm.Error) as e:
        pocketlm.Model(MODEL, kernels="sse9")
    assert "config.kernels = 'sse9'" in str(e.value)


def test_stopping_early_stops_the_run():
    with pocketlm.Model(MODEL) as m:
        pieces = m.generate("Once upon a time", steps=256, temperature=0, seed=1)
        first = next(pieces)
        pieces.close()  # aborts the run behind it
        assert first
        assert "".join(m.generate("Once upon a time", steps=8, temperature=0))
