// Stories of a training text and the fixed held-out split used to measure models on text they
// were not trained on. A text holds stories separated by lines that contain only
// "<|endoftext|>" (shared/data/tinystories-5k.txt). Story i (0-based, in file order) is held out
// when SplitMix64(seed + i).next() % 100 >= 95: about 5 % of the stories, spread over the whole
// file, the same on every machine for a seed (default 42). Training (issue 14) keeps the other
// 95 % with the same function and seed, so the two never overlap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "splitmix64.h"

namespace pocketlm::cli {

inline constexpr std::uint64_t kDefaultSplitSeed = 42;
inline constexpr const char* kStorySeparator = "<|endoftext|>";

// Whether story `index` belongs to the held-out 5 % for `seed`.
inline bool is_heldout_story(std::uint64_t index, std::uint64_t seed = kDefaultSplitSeed) {
  return SplitMix64(seed + index).next() % 100 >= 95;
}

// The stories of `text`: the text between separator lines, without the newlines that border
// them; empty stories are dropped. Views into `text`.
inline std::vector<std::string_view> split_stories(std::string_view text) {
  std::vector<std::string_view> stories;
  std::size_t start = 0;
  auto add = [&](std::size_t begin, std::size_t end) {
    while (begin < end && (text[begin] == '\n' || text[begin] == '\r')) ++begin;
    while (end > begin && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
    if (end > begin) stories.push_back(text.substr(begin, end - begin));
  };
  std::size_t line = 0;
  while (line <= text.size()) {
    std::size_t eol = text.find('\n', line);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view l = text.substr(line, eol - line);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l == kStorySeparator) {
      add(start, line);
      start = eol + 1;
    }
    line = eol + 1;
  }
  if (start < text.size()) add(start, text.size());
  return stories;
}

}  // namespace pocketlm::cli
