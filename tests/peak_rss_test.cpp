// --heap bounds the whole process on the host: its peak resident memory stays inside the budget
// (the plan keeps kHostProcessReserveBytes of it for the program itself). Measured as
// bench/peak-rss.sh does, with GNU time.
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "golden_models.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

// Peak RSS in bytes of `pocketlm args` (its output to /dev/null), or -1 if it failed, from GNU
// time's %M. Not wait4's rusage of a child spawned here: exec keeps the high-water mark of the
// memory the child shared with this test process before it, which would be counted.
long long peak_rss(const std::vector<std::string>& args) {
  const std::string out = temp_dir() + "/rss";
  std::string cmd = "/usr/bin/time -f %M -o '" + out + "' '" + pocketlm_binary() + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) return -1;
  return std::stoll(read_text(out)) * 1024;  // KiB
}

bool measurable() {
#if defined(__SANITIZE_ADDRESS__)
  return false;  // ASan's shadow memory is resident too
#else
  return emulator_prefix().empty() && file_exists("/usr/bin/time");  // not qemu-user's memory
#endif
}

TEST(PeakRss, Stories15MShapeInQ80StaysInsideA24MiBHeap) {
  if (!measurable()) GTEST_SKIP() << "native, uninstrumented builds with GNU time (Debian package time) only";
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  const std::string model = golden_model_path("synth15M_q80.bin");
  ASSERT_FALSE(model.empty());
  const long long rss = peak_rss({"run", model, "-z", model_path("tokenizer.bin"), "-n", "256", "--seq-len", "256",
                                  "--heap", "24MiB", "-s", "42", "-i", "Once upon a time"});
  ASSERT_GT(rss, 0);
  EXPECT_LE(rss, 24ll << 20) << "peak RSS " << rss << " bytes over the 24 MiB --heap";
}

// The reserve covers the program without an arena: `--version` touches the binary, libc and
// the CLI's start-up, and stays inside the 4 MiB kept for it (cli_common.h) with 256 KiB to
// spare for what a run adds outside the arena (its threads' stacks, the prompt and log).
TEST(PeakRss, TheProgramAloneFitsItsReserve) {
  if (!measurable()) GTEST_SKIP() << "native, uninstrumented builds with GNU time (Debian package time) only";
  const long long rss = peak_rss({"--version"});
  ASSERT_GT(rss, 0);
  EXPECT_LE(rss, 3840ll << 10) << "--version alone is " << rss << " bytes: raise kHostProcessReserveBytes";
}

}  // namespace
}  // namespace pocketlm::test
