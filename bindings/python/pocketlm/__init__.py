"""pocketlm from Python: a small ctypes module over the C API's shared library (libpocketlm.so,
src/pocketlm/api/pocketlm.h).

    import pocketlm
    with pocketlm.Model("assets/stories1M.gguf") as m:
        print(m.plan())                                   # the memory plan as a dict
        print("".join(m.generate("Once upon a time", steps=48, temperature=0.8, seed=42)))
        m.chat_begin(temperature=0)
        print("".join(m.chat_turn("Once upon a time")))

The library is $POCKETLM_LIBRARY, else libpocketlm.so in ../../build (a checkout's build), else
the system's (ctypes.util.find_library). Errors are pocketlm.Error with the C API's one-line
message and status.
"""
import codecs
import ctypes as C
import ctypes.util
import os
import queue
import threading

from . import _abi

__all__ = ["Error", "Model", "library"]

STATUS = {0: "ok", 1: "invalid argument", 2: "not found", 3: "io error", 4: "bad format", 5: "out of memory",
          6: "unsupported", 7: "wrong state", 8: "aborted"}


class Error(Exception):
    """A failed call: .status is the pocketlm_status, str() the one-line message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


_lib = None


def library():
    """The loaded shared library (loaded once)."""
    global _lib
    if _lib is None:
        here = os.path.dirname(os.path.abspath(__file__))
        candidates = [os.environ.get("POCKETLM_LIBRARY"), os.path.join(here, "..", "..", "..", "build", "libpocketlm.so"),
                      ctypes.util.find_library("pocketlm")]
        path = next((p for p in candidates if p and (os.path.exists(p) or not os.path.isabs(p))), None)
        if path is None:
            raise OSError("pocketlm: libpocketlm.so not found: set POCKETLM_LIBRARY or build it (make build)")
        _lib = _abi.declare(C.CDLL(path))
        if _lib.pocketlm_version() // 10000 != 1:
            raise OSError(f"pocketlm: {path} is C API version {_lib.pocketlm_version()}; this module speaks 1.x")
    return _lib


class Model:
    """One session over a model file, in memory this object owns (the C API allocates nothing).

    path: a llama2.c .bin or a GGUF file; tokenizer: a tokenizer.bin (None: the GGUF's own);
    seq_len: the context (0: the model's); kernels: a backend name (None: the CPU's fastest);
    chat: carve what chat_begin/chat_turn need."""

    def __init__(self, path, tokenizer=None, seq_len=0, kernels=None, chat=False):
        self._lib = library()
        self._files, self._keep = [], []
        self._config = _abi.Config()
        self._lib.pocketlm_config_defaults(C.byref(self._config))
        self._config.model = self._storage(path)
        if tokenizer:
            self._config.tokenizer = self._storage(tokenizer)
        self._config.seq_len = seq_len
        self._config.kernels = kernels.encode() if kernels else None
        self._config.chat = 1 if chat else 0
        n = self._lib.pocketlm_session_bytes()
        self._memory = C.create_string_buffer(n)
        self._session = C.c_void_p()
        self._check(self._lib.pocketlm_create(self._memory, n, C.byref(self._session)), None)
        self._plan = _abi.MemoryPlan()
        self._plan.size = C.sizeof(_abi.MemoryPlan)
        self._check(self._lib.pocketlm_plan(self._session, C.byref(self._config), C.byref(self._plan)))
        self._buffers = []
        for t in range(self._plan.tier_count):
            tier = self._plan.tiers[t]
            if tier.storage or tier.bytes == 0:
                continue
            buf = C.create_string_buffer(tier.bytes + _abi.ALIGNMENT)
            self._buffers.append(buf)
            self._config.tier_buffers[t] = C.cast(buf, C.c_void_p)
            self._config.tier_buffer_bytes[t] = tier.bytes + _abi.ALIGNMENT
        self._check(self._lib.pocketlm_open(self._session, C.byref(self._config)))

    def _storage(self, path):
        f = open(path, "rb")
        self._files.append(f)
        size = os.fstat(f.fileno()).st_size

        def read(ctx, offset, dst, n):
            f.seek(offset)
            data = f.read(n)
            if len(data) != n:
                return 1
            C.memmove(dst, data, n)
            return 0

        callback = _abi.READ_FN(read)
        name = path.encode()
        self._keep += [callback, name]
        return _abi.Storage(callback, None, size, name)

    def _check(self, status, session=...):
        if status != 0:
            s = self._session if session is ... else session
            raise Error(status, self._lib.pocketlm_last_error(s).decode("utf-8", "replace"))

    def plan(self):
        """The memory plan as a dict: tiers (name, storage, bytes, capacity), fits, ram_bytes,
        storage_bytes_per_token, seq_len, prefill_batch."""
        p = self._plan
        tiers = [{"name": p.tiers[t].name.decode(), "storage": bool(p.tiers[t].storage), "bytes": p.tiers[t].bytes,
                  "capacity": p.tiers[t].capacity} for t in range(p.tier_count)]
        return {"tiers": tiers, "fits": bool(p.fits), "ram_bytes": p.ram_bytes,
                "storage_bytes_per_token": p.storage_bytes_per_token, "seq_len": p.seq_len,
                "prefill_batch": p.prefill_batch}

    @property
    def seq_len(self):
        return self._lib.pocketlm_seq_len(self._session)

    @property
    def vocab_size(self):
        return self._lib.pocketlm_vocab_size(self._session)

    def _sampler(self, temperature, topp, seed):
        s = _abi.Sampler()
        self._lib.pocketlm_sampler_defaults(C.byref(s))
        s.temperature, s.topp, s.seed = temperature, topp, seed
        return s

    def encode(self, text, bos=True):
        """The token ids of text (llama2.c's encode), BOS first when bos."""
        raw = text.encode()
        entries = C.c_size_t()
        self._check(self._lib.pocketlm_prompt_capacity(self._session, len(raw), C.byref(entries)))
        ids = (C.c_int32 * entries.value)()
        n = C.c_int()
        self._check(self._lib.pocketlm_encode(self._session, raw, len(raw), 1 if bos else 0, ids, entries.value,
                                              C.byref(n)))
        return list(ids[:n.value])

    def _stream(self, call):
        """Runs call(token_fn) on a thread and yields each piece (bytes decoded as UTF-8 once whole)
        as it comes; an error is raised where the iteration stands."""
        q = queue.Queue()
        done = object()

        def on_token(ctx, token, piece, n):
            q.put(C.string_at(piece, n))
            return 0

        callback = _abi.TOKEN_FN(on_token)
        result = {}

        def run():
            try:
                result["status"] = call(callback)
            finally:
                q.put(done)

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        # Pieces are bytes: a character spelled over several byte tokens is yielded once whole.
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            while True:
                item = q.get()
                if item is done:
                    break
                text = decoder.decode(item)
                if text:
                    yield text
        finally:
            if worker.is_alive():  # the caller stopped iterating: stop the run too
                self._lib.pocketlm_abort(self._session)
            worker.join()
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail
        self._check(result.get("status", 0))

    def generate(self, prompt, steps=256, temperature=1.0, topp=0.9, seed=1):
        """llama2.c's loop (pocketlm run): an iterator of the text pieces of the prompt's tokens
        and the generated ones, steps positions in all."""
        ids = self.encode(prompt)
        arr = (C.c_int32 * len(ids))(*ids)
        sampler = self._sampler(temperature, topp, seed)
        return self._stream(lambda cb: self._lib.pocketlm_generate(self._session, arr, len(ids), steps,
                                                                   C.byref(sampler), cb, None, None))

    def chat_begin(self, temperature=1.0, topp=0.9, seed=1, max_reply=0, template="none", system=None):
        """Starts a conversation (the model opened with chat=True): pocketlm chat's template,
        reply reserve and context-full policy."""
        c = _abi.ChatConfig()
        self._lib.pocketlm_chat_config_defaults(C.byref(c))
        c.sampler = self._sampler(temperature, topp, seed)
        c.max_reply = max_reply
        self._template, self._system = template.encode(), system.encode() if system else None
        c.chat_template, c.system_prompt = self._template, self._system
        self._check(self._lib.pocketlm_chat_begin(self._session, C.byref(c)))

    def chat_turn(self, message):
        """One turn: an iterator of the reply's text pieces."""
        raw = message.encode()
        stats = _abi.ChatStats()
        stats.size = C.sizeof(_abi.ChatStats)
        return self._stream(lambda cb: self._lib.pocketlm_chat_turn(self._session, raw, len(raw), cb, None,
                                                                    C.byref(stats)))

    def close(self):
        if self._session:
            self._lib.pocketlm_close(self._session)
            self._session = None
        for f in self._files:
            f.close()
        self._files = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
