"""pocketlm's trainer: a SentencePiece tokenizer and a llama2.c-architecture model trained on
TinyStories with Debian's python3-torch on the CPU, exported for pocketlm.

Modules: data (stories and the 95/5 split), tokenizer (SentencePiece BPE, tokenizer.bin),
model (the Llama network), train (the loop, with optional logit distillation), export (llama2.c
v0/v1 and GGUF), gguf (GGUF read and write by the engine's names), schema (those names, from
pocketlm-probe), distill (stories sampled from stories260K), teacher (stories260K for the
trainer), evaluate (validation loss as `pocketlm eval` computes it), parity (PyTorch against
pocketlm), kinds and kind_parity (test-only model kinds' modules, each against the engine's),
report (the distillation table and PNG), run (the recipes behind `make train` and
`make train-smoke`).
"""

import os as _os

# One BLAS thread: torch's own threads (TrainConfig.threads) decide the parallelism; OpenBLAS's
# busy-waiting pool on top of them oversubscribes a 2-core machine.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
