// Real memory tiers: a session carves each region from the block of the tier its plan puts it
// in. The plan's bytes per tier equal what the session carves per tier (every backend, the
// host and the device profiles); on the host the tiers are separate allocations; with the
// ESP32-S3's tiers, buffers of exactly the planned sizes are enough, and a buffer one byte
// short is refused naming its tier; the placement follows the heat rule, not region names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device_catalog.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/memory/memory_plan.h"
#include "pocketlm/runtime/placement.h"
#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

struct Files {
  FileStorage model, tokenizer;
  Files() {
    EXPECT_TRUE(model.open(test::model_path("stories260K.bin").c_str(), "model").ok());
    EXPECT_TRUE(tokenizer.open(test::model_path("tok512.bin").c_str(), "tokenizer").ok());
  }
};

const DeviceProfile* device(const char* name) {
  if (std::string(name) == "none") return nullptr;
  const DeviceProfile* d = cli::DeviceCatalog::builtin().find(name);
  EXPECT_NE(d, nullptr) << name;
  return d;
}

TEST(Tiers, EachTierCarvesWhatThePlanSays) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  for (const char* const* name = kernel_names(); *name; ++name) {
    const Kernels* kernels = find_kernels(*name);
    if (!kernels) continue;  // not on this CPU
    for (const char* dev : {"none", "host", "psp", "esp32s3"}) {
      SCOPED_TRACE(std::string(*name) + " on " + dev);
      Files f;
      SessionOptions options;
      options.kernels = kernels;
      options.device = device(dev);
      Session s;
      const Status st = s.open(f.model, f.tokenizer, options);
      ASSERT_TRUE(st.ok()) << st.message();
      const MemoryPlan& plan = s.plan();
      for (int t = 0; t < plan.tier_count(); ++t) {
        if (plan.tier(t).storage) continue;
        EXPECT_EQ(s.arena().used(t), plan.arena_bytes(t)) << plan.tier(t).name;
        EXPECT_EQ(s.arena().capacity(t), plan.arena_bytes(t)) << plan.tier(t).name;
      }
      EXPECT_EQ(s.arena_bytes(), plan.total());
    }
  }
}

TEST(Tiers, OnTheHostTheTiersAreSeparateAllocations) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  Files f;
  SessionOptions options;
  options.device = device("esp32s3");
  Session s;
  ASSERT_TRUE(s.open(f.model, f.tokenizer, options).ok());
  const Arena& a = s.arena();
  ASSERT_GT(a.used(0), 0u);  // sram
  ASSERT_GT(a.used(1), 0u);  // psram
  const unsigned char *b0 = a.base(0), *b1 = a.base(1);
  EXPECT_TRUE(b0 + a.capacity(0) <= b1 || b1 + a.capacity(1) <= b0) << "the two tiers overlap";
}

TEST(Tiers, Esp32s3BuffersOfThePlannedSizesAreEnoughAndOneByteShortIsNamed) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  SessionOptions options;
  options.device = device("esp32s3");
  MemoryPlan plan;
  {
    Files f;
    SessionPlan planned;
    ASSERT_TRUE(plan_session(f.model, &f.tokenizer, options, &planned).ok());
    plan = planned.memory;
  }
  // The hot regions sit in SRAM, the weights that do not fit there in PSRAM.
  EXPECT_EQ(plan.region_tier("activations"), 0);
  EXPECT_EQ(plan.region_tier("logits"), 0);
  EXPECT_EQ(plan.region_tier("ffn weights"), 1);
  EXPECT_EQ(plan.region_tier("kv cache"), 1);
  for (int t = 0; t < plan.tier_count(); ++t)
    if (!plan.tier(t).storage) EXPECT_LE(plan.tier_total(t), plan.tier(t).capacity) << plan.tier(t).name;
  // Caller buffers (16-aligned, as heap_caps_malloc gives them) of exactly arena_bytes(t):
  // every carve lands inside its own tier's buffer, or open() would fail.
  std::vector<std::vector<unsigned char>> buffers;
  for (int short_tier = -1; short_tier < 2; ++short_tier) {
    SCOPED_TRACE(short_tier);
    SessionOptions o = options;
    buffers.clear();
    for (int t = 0; t < 2; ++t) {
      const auto bytes = static_cast<std::size_t>(plan.arena_bytes(t)) - (t == short_tier ? 1 : 0);
      buffers.emplace_back(bytes + Arena::kAlignment);
      unsigned char* p = buffers.back().data();
      p += (Arena::kAlignment - reinterpret_cast<std::uintptr_t>(p) % Arena::kAlignment) % Arena::kAlignment;
      o.tier_buffers[t] = p;
      o.tier_buffer_bytes[t] = bytes;
    }
    Files f;
    Session s;
    const Status st = s.open(f.model, f.tokenizer, o);
    if (short_tier < 0) {
      ASSERT_TRUE(st.ok()) << st.message();
      for (int t = 0; t < 2; ++t) {
        EXPECT_EQ(s.arena().base(t), o.tier_buffers[t]);
        EXPECT_EQ(s.arena().used(t), plan.arena_bytes(t));
      }
      std::size_t capacity = 0;
      ASSERT_TRUE(s.prompt_capacity(4, &capacity).ok());
      std::vector<std::int32_t> tokens(capacity);
      int n = 0;
      ASSERT_TRUE(s.encode("Once", 4, tokens.data(), tokens.size(), &n).ok());
      SamplerParams params;
      params.temperature = 0.0f;
      ASSERT_TRUE(s.generate(tokens.data(), n, 8, params, [](std::int32_t, std::int32_t, void*) { return true; }, nullptr,
                           nullptr).ok());
    } else {
      ASSERT_FALSE(st.ok());
      EXPECT_NE(std::string(st.message()).find(std::string("the buffer for tier ") + plan.tier(short_tier).name),
                std::string::npos)
          << st.message();
    }
  }
}

TEST(Tiers, PlacementFollowsHeatThenSize) {
  MemoryPlan plan;
  const PlanTier tiers[] = {{"fast", false, 100, 0}, {"slow", false, 0, 0}};
  plan.set_tiers(tiers, 2);
  ASSERT_TRUE(plan.add("table", 60, "", Heat::kRare).ok());
  ASSERT_TRUE(plan.add("weights", 70, "", Heat::kOncePerToken).ok());
  ASSERT_TRUE(plan.add("scratch", 30, "", Heat::kManyPerToken).ok());
  ASSERT_TRUE(plan.add("norms", 10, "", Heat::kOncePerToken).ok());
  assign_ram_tiers(&plan);
  EXPECT_EQ(plan.region_tier("scratch"), 0);  // hottest
  EXPECT_EQ(plan.region_tier("norms"), 0);    // smaller of the once-per-token ones
  EXPECT_EQ(plan.region_tier("weights"), 1);  // 30 + 10 + 70 > 100
  EXPECT_EQ(plan.region_tier("table"), 0);    // coldest, but the 60 bytes left hold it exactly
}

}  // namespace
}  // namespace pocketlm
