#include "pocketlm/text/chat_template.h"

#include <cstring>

namespace pocketlm {

namespace {

// Appends s[0..n) at *at, writing only what fits in cap; *at counts every byte.
void put(const char* s, std::size_t n, char* out, std::size_t cap, std::size_t* at) {
  if (*at < cap) std::memcpy(out + *at, s, n < cap - *at ? n : cap - *at);
  *at += n;
}

void put(const char* s, char* out, std::size_t cap, std::size_t* at) { put(s, std::strlen(s), out, cap, at); }

}  // namespace

bool find_chat_template(const char* name, ChatTemplate* out) {
  if (std::strcmp(name, "none") == 0) {
    *out = ChatTemplate::kNone;
    return true;
  }
  if (std::strcmp(name, "llama2") == 0) {
    *out = ChatTemplate::kLlama2;
    return true;
  }
  return false;
}

std::size_t render_chat_message(ChatTemplate t, const char* system, std::size_t system_len, const char* user,
                                std::size_t user_len, int turn, char* out, std::size_t cap) {
  std::size_t at = 0;
  if (t == ChatTemplate::kNone) {
    put(user, user_len, out, cap, &at);
    return at;
  }
  put("[INST] ", out, cap, &at);
  if (turn == 0 && system && system_len > 0) {
    put("<<SYS>>\n", out, cap, &at);
    put(system, system_len, out, cap, &at);
    put("\n<</SYS>>\n\n", out, cap, &at);
  }
  put(user, user_len, out, cap, &at);
  put(" [/INST]", out, cap, &at);
  return at;
}

}  // namespace pocketlm
