// --json: plan, devices, bench and eval print one JSON object (devices: an array, or one
// profile) with the keys docs/json.md documents, carrying the same figures as their tables.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "test_support.h"

namespace pocketlm::test {
namespace {

std::string stories260k() { return model_path("stories260K.bin"); }
std::string tok512() { return model_path("tok512.bin"); }

nlohmann::json parse(const CommandResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

// The "total (arena)" bytes of the text plan.
unsigned long long text_arena_bytes(const std::string& out) {
  const std::size_t at = out.find("total (arena)");
  if (at == std::string::npos) return 0;
  return std::stoull(out.substr(out.find('|', at) + 1));
}

TEST(JsonOutput, PlanCarriesTheTablesFigures) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult text = run_pocketlm({"plan", stories260k(), "-z", tok512()});
  const CommandResult json = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = parse(json);
  EXPECT_EQ(j["model"], stories260k());
  EXPECT_EQ(j["config"]["dim"], 64);
  EXPECT_EQ(j["config"]["n_kv_heads"], 4);
  EXPECT_EQ(j["config"]["vocab_size"], 512);
  EXPECT_EQ(j["device"], "host");
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_TRUE(j["plan"]["fits"].get<bool>());
  EXPECT_EQ(j["plan"]["arena_bytes"].get<unsigned long long>(), text_arena_bytes(text.out));
  std::uint64_t sum = 0;
  for (const auto& region : j["plan"]["tiers"][0]["regions"]) sum += region["bytes"].get<std::uint64_t>();
  EXPECT_EQ(sum, j["plan"]["tiers"][0]["total"].get<std::uint64_t>());
  EXPECT_TRUE(j["plan"]["tiers"][0]["capacity"].is_null());  // the host: unbounded
}

TEST(JsonOutput, PlanOverBudgetIsStillJsonAndExitsOne) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--heap", "3M", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  const nlohmann::json j = parse(r);
  EXPECT_FALSE(j["plan"]["fits"].get<bool>());
  ASSERT_TRUE(j["error"].is_string());
  EXPECT_NE(j["error"].get<std::string>().find("but the budget is"), std::string::npos) << j["error"];
  EXPECT_NE(r.err.find("pocketlm: error: "), std::string::npos) << r.err;
}

TEST(JsonOutput, DevicePlanHasEveryTier) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r = run_pocketlm({"plan", stories260k(), "-z", tok512(), "--device", "esp32s3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = parse(r);
  EXPECT_EQ(j["kernels"], "tiled4");
  ASSERT_EQ(j["plan"]["tiers"].size(), 3u);
  EXPECT_EQ(j["plan"]["tiers"][0]["name"], "sram");
  EXPECT_EQ(j["plan"]["tiers"][2]["storage"], true);
  EXPECT_EQ(j["plan"]["tiers"][2]["reserved"], 851968);
}

TEST(JsonOutput, DevicesListsProfilesOrOne) {
  const nlohmann::json all = parse(run_pocketlm({"devices", "--json"}));
  ASSERT_TRUE(all.is_array());
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(all[0]["name"], "host");
  const CommandResult one = run_pocketlm({"devices", "esp32s3", "--json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const nlohmann::json esp = parse(one);
  EXPECT_EQ(esp["name"], "esp32s3");
  EXPECT_EQ(esp["kernels"], "tiled4");
  EXPECT_EQ(esp["tiers"][0]["capacity"], 234056);
  EXPECT_EQ(esp["screen"]["width"], 320);
  EXPECT_GT(esp["compute"]["macs_per_s"].get<double>(), 0);
  const CommandResult bad = run_pocketlm({"devices", "esp32", "--json"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("'esp32' is not a device profile"), std::string::npos) << bad.err;
}

TEST(JsonOutput, BenchHasRatesAndTheProjection) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const CommandResult r = run_pocketlm({"bench", stories260k(), "-z", tok512(), "-n", "16", "--repeats", "1",
                                        "--device", "esp32s3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = parse(r);
  EXPECT_GT(j["decode_tok_per_s"].get<double>(), 0);
  EXPECT_GT(j["prefill_tok_per_s"].get<double>(), 0);
  EXPECT_EQ(j["steps"], 16);
  EXPECT_EQ(j["kernels"], "tiled4");
  EXPECT_GT(j["weight_bytes_per_token"].get<double>(), 0);
  EXPECT_GT(j["read_bandwidth"]["gb_per_s"].get<double>(), 0);
  EXPECT_TRUE(j["projection"]["estimate"].get<bool>());
  EXPECT_GT(j["projection"]["decode_tok_per_s"].get<double>(), 0);
  EXPECT_EQ(j["projection"]["tiers"].size(), 3u);
  EXPECT_EQ(r.out.find("metric"), std::string::npos) << "no table with --json";
  // Greedy decode runs positions prompt_tokens - 1 .. 15, each reading pos + 1 positions of the
  // kv cache: stories260K's 5 layers x (keys + values) x kv_dim 32 x 4 bytes = 1280 per position.
  const double prompt = j["prompt_tokens"].get<double>();
  EXPECT_DOUBLE_EQ(j["kv_cache_bytes_per_token"].get<double>(), 1280.0 * (prompt + 16) / 2);
  EXPECT_GT(j["fraction_of_limit_with_kv"].get<double>(), j["fraction_of_limit"].get<double>());
  const CommandResult f16 = run_pocketlm({"bench", stories260k(), "-z", tok512(), "-n", "16", "--repeats", "1",
                                          "--kv", "f16", "--json"});
  ASSERT_EQ(f16.exit_code, 0) << f16.err;
  EXPECT_DOUBLE_EQ(parse(f16)["kv_cache_bytes_per_token"].get<double>(), 640.0 * (prompt + 16) / 2);
}

TEST(JsonOutput, EvalCarriesTheTablesFigures) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin", "models/tok512.bin");
  const std::string text = temp_dir() + "/stories.txt";
  const std::string body = "Once upon a time there was a cat.\n<|endoftext|>\nThe dog ran home to his mom.\n";
  write_file(text, std::vector<unsigned char>(body.begin(), body.end()));
  const CommandResult table = run_pocketlm({"eval", stories260k(), text, "-z", tok512()});
  const CommandResult r = run_pocketlm({"eval", stories260k(), text, "-z", tok512(), "--against", stories260k(), "--json"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = parse(r);
  EXPECT_EQ(j["stories"], 2);
  EXPECT_EQ(j["split"], "all");
  EXPECT_NE(table.out.find(", " + std::to_string(j["bytes"].get<int>()) + " bytes\n"), std::string::npos) << table.out;
  char bpb[32];
  std::snprintf(bpb, sizeof bpb, "bits per byte  %.6f\n", j["bits_per_byte"].get<double>());
  EXPECT_NE(table.out.find(bpb), std::string::npos) << table.out << " vs " << bpb;
  EXPECT_EQ(j["against"]["mean_kl"].get<double>(), 0.0);
  EXPECT_EQ(j["against"]["top1_agreement"].get<double>(), 1.0);
}

}  // namespace
}  // namespace pocketlm::test
