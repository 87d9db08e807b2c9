#include "progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace pocketlm::cli {

ProgressBar::ProgressBar(const char* label, std::uint64_t total)
    : label_(label), total_(total ? total : 1), enabled_(::isatty(STDERR_FILENO) == 1) {
  draw();
}

ProgressBar::~ProgressBar() {
  if (enabled_) std::fputc('\n', stderr);
}

void ProgressBar::advance(std::uint64_t amount) {
  done_ += amount;
  if (done_ > total_) done_ = total_;
  draw();
}

void ProgressBar::draw() {
  if (!enabled_) return;
  const int percent = static_cast<int>(done_ * 100 / total_);
  if (percent == shown_percent_) return;  // redraw only when the number changes
  shown_percent_ = percent;
  constexpr int kWidth = 40;
  char bar[kWidth + 1];
  const int filled = percent * kWidth / 100;
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '.';
  bar[kWidth] = '\0';
  std::fprintf(stderr, "\r%s [%s] %3d%%", label_, bar, percent);
  std::fflush(stderr);
}

}  // namespace pocketlm::cli
