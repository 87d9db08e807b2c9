// ProgressBar: one self-overwriting line on stderr for long file writes (synth, convert).
// It draws only when stderr is a terminal, so pipes, logs and tests see nothing but errors.
#pragma once

#include <cstdint>

namespace pocketlm::cli {

class ProgressBar {
 public:
  // `label` must outlive the bar; `total` is the amount of work (bytes) for 100%.
  ProgressBar(const char* label, std::uint64_t total);
  // Ends the line if anything was drawn, so an error message starts on a fresh line.
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void advance(std::uint64_t amount);

 private:
  void draw();

  const char* label_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  int shown_percent_ = -1;
  bool enabled_;
};

}  // namespace pocketlm::cli
