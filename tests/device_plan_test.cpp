// Device plans: the tier that overflows is named (not --heap when none was given), the flash
// tier keeps the firmware's share, plans use the kernels the device runs, and bench's device
// projection is per decode token and counts each tier's reads (so the weight type matters).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "golden_models.h"
#include "pocketlm/memory/memory_plan.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

std::string stories260k() { return model_path("stories260K.bin"); }
std::string tok512() { return model_path("tok512.bin"); }

TEST(DevicePlan, AFileLargerThanFlashIsBlamedOnFlashNotHeap) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  const std::string model = golden_model_path("synth15M_q80.bin");  // 17 MB: over 16 MiB of flash
  ASSERT_FALSE(model.empty());  // the pocketlm binary makes it; a failure says why above
  const CommandResult r = run_pocketlm({"plan", model, "-z", model_path("tokenizer.bin"), "--device", "esp32s3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("--heap"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not fit esp32s3's flash"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("of them the firmware's"), std::string::npos) << r.err;
  // run says the same.
  const CommandResult run = run_pocketlm({"run", model, "-z", model_path("tokenizer.bin"), "--device", "esp32s3"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("does not fit esp32s3's flash"), std::string::npos) << run.err;
}

TEST(DevicePlan, FirmwareShareCountsAgainstTheFlash) {
  MemoryPlan plan;
  const PlanTier tiers[] = {{"sram", false, 0, 0}, {"flash", true, 16u << 20, (1u << 20) + (64u << 10)}};
  plan.set_tiers(tiers, 2);
  plan.set_storage_file_bytes(15u << 20);  // fits 16 MiB, not 16 MiB less 1.06 MiB
  EXPECT_FALSE(plan.fits());
  EXPECT_EQ(plan.overflowing_tier(), 1);
  const Status st = plan.overflow_error("m.gguf", "esp32s3", "");
  EXPECT_STREQ(st.message(),
               "m.gguf: the model file (15728640 bytes, 15.00 MiB) does not fit esp32s3's flash: it holds 16777216 "
               "bytes (16.00 MiB), 1114112 (1.06 MiB) of them the firmware's");
  plan.set_storage_file_bytes((16u << 20) - (1u << 20) - (64u << 10));
  EXPECT_TRUE(plan.fits());
  std::string text;
  plan.render([](const char* line, void* ctx) { *static_cast<std::string*>(ctx) += std::string(line) + "\n"; }, &text);
  EXPECT_NE(text.find("firmware (reserved)    |      1114112 |"), std::string::npos) << text;
}

TEST(DevicePlan, RamTierOverflowNamesTheTier) {
  MemoryPlan plan;
  const PlanTier tiers[] = {{"sram", false, 1000, 0}, {"psram", false, 5000, 0}};
  plan.set_tiers(tiers, 2);
  ASSERT_TRUE(plan.add("activations", 2000, "").ok());
  const Status st = plan.overflow_error("m.bin", "esp32s3", "");
  EXPECT_STREQ(st.message(), "m.bin: the session needs 2000 bytes (1.95 KiB) in esp32s3's sram but it holds 1000 bytes "
                             "(1000 B)");
  MemoryPlan host;
  ASSERT_TRUE(host.add("activations", 2000, "").ok());
  host.set_budget(1000);
  EXPECT_STREQ(host.overflow_error("m.bin", nullptr, "").message(),
               "m.bin: the session needs 2000 bytes (1.95 KiB) but the budget is 1000 bytes (1000 B)");
}

TEST(DevicePlan, DevicePlansUseTheDevicesKernels) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  for (const char* device : {"psp", "esp32s3"}) {
    SCOPED_TRACE(device);
    const CommandResult r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device", device});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("kernels tiled4,"), std::string::npos) << r.out;
    const CommandResult ref = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device", device, "--kernels", "reference"});
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    EXPECT_NE(ref.out.find("kernels reference,"), std::string::npos) << ref.out;
  }
  const CommandResult run = run_pocketlm({"run", stories260k(), "-z", tok512(), "--device", "esp32s3", "-n", "4", "-t", "0"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("kernels tiled4"), std::string::npos) << run.err;
}

// "projected decode tok/s | 58.7 on esp32s3 (..." -> 58.7
double projected(const std::string& out) {
  const std::string key = "projected decode tok/s | ";
  const std::size_t at = out.find(key);
  return at == std::string::npos ? -1 : std::strtod(out.c_str() + at + key.size(), nullptr);
}

TEST(DevicePlan, ProjectionIsPerDecodeTokenAndCountsTheWeightType) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string dir = temp_dir();
  const std::string f32 = dir + "/s260k.gguf", q4 = dir + "/s260k_q4_0.gguf";
  ASSERT_EQ(run_pocketlm({"convert", stories260k(), "--to", "gguf", "-z", tok512(), "-o", f32}).exit_code, 0);
  ASSERT_EQ(run_pocketlm({"convert", stories260k(), "--to", "gguf", "--type", "q4_0", "-z", tok512(), "-o", q4}).exit_code, 0);
  auto bench = [](const std::string& model, const char* steps) {
    const CommandResult r = run_pocketlm({"bench", model, "--device", "esp32s3", "-n", steps, "--repeats", "1"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("an estimate per decode token"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("; psram "), std::string::npos) << r.out;
    return projected(r.out);
  };
  const double f32_short = bench(f32, "8"), f32_long = bench(f32, "128"), q4_long = bench(q4, "128");
  ASSERT_GT(f32_short, 0);
  // Prefill is not averaged in: more steps change only the kv cache's share.
  EXPECT_LT(f32_short / f32_long, 1.5) << f32_short << " vs " << f32_long;
  // Fewer weight bytes read from PSRAM per token: a faster projection.
  EXPECT_GT(q4_long, 1.2 * f32_long) << q4_long << " vs " << f32_long;
}

}  // namespace
}  // namespace pocketlm::test
