// Chat templates: how a chat message becomes the text that is encoded (pocketlm chat, the C
// API's chat turns). Two templates:
// - none: plain text (a story continued turn by turn, for models that are not chat models):
//   the first message with BOS, later ones without, as continuations of the same text;
// - llama2: llama2.c's run.c chat(): every message encoded with BOS as "[INST] {user} [/INST]",
//   the first one as "[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]" when there is a
//   system prompt.
#pragma once

#include <cstddef>

namespace pocketlm {

enum class ChatTemplate { kNone, kLlama2 };

// The template named `name` ("none" or "llama2") into *out; false for any other name.
bool find_chat_template(const char* name, ChatTemplate* out);

// Writes the text of message number `turn` (0 = the first) into out[0..cap) (no NUL) and
// returns its length in bytes, which may exceed cap: then only the first cap bytes are written
// (call again with a buffer that large). system may be null or empty (no system block).
std::size_t render_chat_message(ChatTemplate t, const char* system, std::size_t system_len, const char* user,
                                std::size_t user_len, int turn, char* out, std::size_t cap);

// Whether message number `turn` is encoded with BOS first.
inline bool chat_message_bos(ChatTemplate t, int turn) { return t == ChatTemplate::kLlama2 || turn == 0; }

// Bytes the template adds around a message at most (the system block's marks included).
inline constexpr std::size_t kChatTemplateOverheadBytes = 64;

}  // namespace pocketlm
