// Helpers shared by the fuzz targets: the shared models read once at start-up, a strict
// UTF-8 validator, and a tokenizer living in its own arena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "pocketlm/io/memory_storage.h"
#include "pocketlm/memory/arena.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/text/tokenizer.h"

namespace pocketlm::fuzz {

// $POCKETLM_SHARED, else the shared/ directory next to the checkout (set by CMake).
inline std::string shared_dir() {
  const char* env = std::getenv("POCKETLM_SHARED");
  return env && *env ? env : POCKETLM_DEFAULT_SHARED;
}
inline std::string model_path(const char* name) { return shared_dir() + "/models/" + name; }

// The bytes of a shared model file; aborts when it is missing (the fuzzer is useless then).
inline const std::vector<unsigned char>& shared_file(const char* name) {
  struct Entry {
    std::string name;
    std::vector<unsigned char> bytes;
  };
  static auto* cache = new std::deque<Entry>();  // deque: references stay valid
  for (const Entry& e : *cache)
    if (e.name == name) return e.bytes;
  const std::string path = model_path(name);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "fuzz: cannot open %s (set POCKETLM_SHARED)\n", path.c_str());
    std::abort();
  }
  std::vector<unsigned char> bytes;
  unsigned char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  std::fclose(f);
  cache->push_back(Entry{name, std::move(bytes)});
  return cache->back().bytes;
}

// Strict UTF-8 (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
inline bool valid_utf8(const unsigned char* s, std::size_t n) {
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80) { ++i; continue; }
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
    else return false;
    if (n - i < len) return false;
    if (s[i + 1] < lo || s[i + 1] > hi) return false;
    for (std::size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return false;
    i += len;
  }
  return true;
}

// A tokenizer loaded from bytes into an arena of its own. ok() is false when loading failed.
class LoadedTokenizer {
 public:
  LoadedTokenizer(const unsigned char* data, std::size_t size, std::int32_t vocab_size, const char* name)
      : storage_(data, size, name) {
    std::uint64_t piece_bytes = 0;
    status_ = Tokenizer::piece_bytes(storage_, vocab_size, &piece_bytes);
    if (!status_.ok()) return;
    const std::size_t chunk = size < 4096 ? size : 4096;
    // Measure, then allocate exactly that, as a session does.
    Arena measuring;
    MemoryPlan plan;
    measuring.init_measuring(&plan);
    Tokenizer probe;
    status_ = probe.carve(vocab_size, piece_bytes, measuring);
    if (!status_.ok()) return;
    void* p = nullptr;
    status_ = measuring.allocate(chunk, "chunk", &p);
    if (!status_.ok()) return;
    status_ = arena_.init_owned(measuring.used());
    if (!status_.ok()) return;
    status_ = tokenizer_.carve(vocab_size, piece_bytes, arena_);
    if (!status_.ok()) return;
    status_ = arena_.allocate(chunk, "chunk", &p);
    if (!status_.ok()) return;
    status_ = tokenizer_.load(storage_, static_cast<unsigned char*>(p), chunk);
  }
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const Tokenizer& get() const { return tokenizer_; }

 private:
  MemoryStorage storage_;
  Arena arena_;
  Tokenizer tokenizer_;
  Status status_;
};

}  // namespace pocketlm::fuzz
