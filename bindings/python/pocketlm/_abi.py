"""The C API's structs and functions (src/pocketlm/api/pocketlm.h, version 1) as ctypes
declarations: the layouts must match the header field for field."""
import ctypes as C

MAX_TIERS = 4
ALIGNMENT = 16

READ_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_uint64, C.c_void_p, C.c_size_t)
TOKEN_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int32, C.POINTER(C.c_char), C.c_size_t)
TASK_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_int)
PARALLEL_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_int, TASK_FN, C.c_void_p)
CLOCK_FN = C.CFUNCTYPE(C.c_uint64)


class Storage(C.Structure):
    _fields_ = [("read", READ_FN), ("ctx", C.c_void_p), ("size", C.c_uint64), ("name", C.c_char_p)]


class RamTier(C.Structure):
    _fields_ = [("name", C.c_char_p), ("capacity", C.c_uint64)]


class Config(C.Structure):
    _fields_ = [("size", C.c_uint32), ("model", Storage), ("tokenizer", Storage), ("ram_tier_count", C.c_int),
                ("ram_tiers", RamTier * (MAX_TIERS - 1)), ("storage_name", C.c_char_p),
                ("storage_capacity", C.c_uint64), ("storage_reserved", C.c_uint64),
                ("tier_buffers", C.c_void_p * (MAX_TIERS - 1)), ("tier_buffer_bytes", C.c_size_t * (MAX_TIERS - 1)),
                ("seq_len", C.c_int), ("kernels", C.c_char_p), ("clock", CLOCK_FN),
                ("clock_ticks_per_second", C.c_uint64), ("kv_type", C.c_char_p), ("prefill_batch", C.c_int),
                ("stream_block_bytes", C.c_size_t), ("parallel_for", PARALLEL_FN), ("parallel_ctx", C.c_void_p),
                ("parallel_threads", C.c_int), ("chat", C.c_int), ("chat_message_bytes", C.c_size_t)]


class PlanTier(C.Structure):
    _fields_ = [("name", C.c_char * 24), ("storage", C.c_int), ("bytes", C.c_uint64), ("capacity", C.c_uint64)]


class MemoryPlan(C.Structure):
    _fields_ = [("size", C.c_uint32), ("tier_count", C.c_int), ("tiers", PlanTier * MAX_TIERS), ("fits", C.c_int),
                ("ram_bytes", C.c_uint64), ("storage_bytes_per_token", C.c_uint64), ("model_file_bytes", C.c_uint64),
                ("seq_len", C.c_int), ("prefill_batch", C.c_int)]


class Sampler(C.Structure):
    _fields_ = [("size", C.c_uint32), ("temperature", C.c_float), ("topp", C.c_float), ("seed", C.c_uint64)]


class ChatConfig(C.Structure):
    _fields_ = [("size", C.c_uint32), ("sampler", Sampler), ("max_reply", C.c_int), ("chat_template", C.c_char_p),
                ("system_prompt", C.c_char_p)]


class ChatStats(C.Structure):
    _fields_ = [("size", C.c_uint32), ("input_tokens", C.c_int), ("reply_tokens", C.c_int), ("context_full", C.c_int),
                ("dropped_tokens", C.c_int), ("reprefill_tokens", C.c_int), ("reply_ended", C.c_int),
                ("reply_cut", C.c_int), ("position", C.c_int)]


def declare(lib):
    """Argument and result types of every function the binding calls."""
    P = C.c_void_p
    sigs = {
        "pocketlm_version": (C.c_int, []),
        "pocketlm_config_defaults": (None, [C.POINTER(Config)]),
        "pocketlm_sampler_defaults": (None, [C.POINTER(Sampler)]),
        "pocketlm_chat_config_defaults": (None, [C.POINTER(ChatConfig)]),
        "pocketlm_session_bytes": (C.c_size_t, []),
        "pocketlm_create": (C.c_int, [P, C.c_size_t, C.POINTER(P)]),
        "pocketlm_plan": (C.c_int, [P, C.POINTER(Config), C.POINTER(MemoryPlan)]),
        "pocketlm_open": (C.c_int, [P, C.POINTER(Config)]),
        "pocketlm_prompt_capacity": (C.c_int, [P, C.c_size_t, C.POINTER(C.c_size_t)]),
        "pocketlm_encode": (C.c_int, [P, C.c_char_p, C.c_size_t, C.c_int, C.POINTER(C.c_int32), C.c_size_t,
                                      C.POINTER(C.c_int)]),
        "pocketlm_generate": (C.c_int, [P, C.POINTER(C.c_int32), C.c_int, C.c_int, C.POINTER(Sampler), TOKEN_FN, P, P]),
        "pocketlm_chat_begin": (C.c_int, [P, C.POINTER(ChatConfig)]),
        "pocketlm_chat_turn": (C.c_int, [P, C.c_char_p, C.c_size_t, TOKEN_FN, P, C.POINTER(ChatStats)]),
        "pocketlm_seq_len": (C.c_int, [P]),
        "pocketlm_vocab_size": (C.c_int, [P]),
        "pocketlm_abort": (None, [P]),
        "pocketlm_last_error": (C.c_char_p, [P]),
        "pocketlm_close": (C.c_int, [P]),
    }
    for name, (restype, argtypes) in sigs.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
    return lib
