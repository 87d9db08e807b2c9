// The ESP32-shaped per-layer-embedding model (docs/ple.md) with its table in flash: a token reads
// one table row; streamed weights give the resident run's tokens; every backend and thread count
// gives reference's tokens; the firmware's golden run is the host's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/ple_schema.h"
#include "pocketlm/runtime/session.h"
#include "device_catalog.h"
#include "golden_models.h"
#include "ports/posix/file_storage.h"
#include "ports/posix/thread_pool.h"
#include "test_support.h"

namespace pocketlm {
namespace {


// ---- The ESP32 shape with its table in flash ------------------------------------------------

// A Storage that records where each read starts.
class RecordingStorage final : public Storage {
 public:
  explicit RecordingStorage(Storage& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  std::uint64_t size() const override { return inner_.size(); }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    reads.push_back({offset, bytes});
    return inner_.read(offset, dst, bytes);
  }
  std::vector<std::pair<std::uint64_t, std::size_t>> reads;

 private:
  Storage& inner_;
};

struct Generated {
  std::vector<int> tokens;  // every token a forward pass ran, in order
};

bool record(std::int32_t prev, std::int32_t /*next*/, void* ctx) {
  static_cast<Generated*>(ctx)->tokens.push_back(prev);
  return true;
}

// The Q4_0 file, and the same with the table in IQ4_XS (the size that fits 16 MiB of flash).
struct TableCase {
  const char* file;
  TensorType table_type;
  std::uint64_t row_bytes;
  bool fits_16mib;  // with Llama 2's tokenizer.bin beside it on the esp32s3 profile's flash
};
class PleEsp32Table : public ::testing::TestWithParam<TableCase> {};

TEST_P(PleEsp32Table, TheTableStaysInFlashAndATokenReadsOneRow) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  test::Esp32PleFiles files(GetParam().file);
  ASSERT_FALSE(HasFailure());
  FileStorage& file = files.model;
  FileStorage& tokenizer = files.tokenizer;
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(file, &spec).ok());
  const TensorInfo table = spec.tensor(kPleTable, -1);
  EXPECT_EQ(table.type, GetParam().table_type);
  const std::uint64_t row = table.bytes() / table.rows;
  EXPECT_EQ(row, GetParam().row_bytes);  // at most the write-up's 450

  // The esp32s3 profile; for a file that does not fit its 16 MiB of flash beside the tokenizer
  // (which the plan must say), the same board with 32 MiB (an N32R8 module).
  const DeviceProfile* esp32s3 = cli::DeviceCatalog::builtin().find("esp32s3");
  ASSERT_NE(esp32s3, nullptr);
  DeviceProfile device_32mib = *esp32s3;
  device_32mib.tiers[2].capacity = 32u << 20;
  if (!GetParam().fits_16mib) {
    SessionOptions options;
    options.device = esp32s3;
    Session session;
    const Status st = session.open(file, tokenizer, options);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(std::string(st.message()).find("with its tokenizer file (433869 bytes"), std::string::npos)
        << st.message();
  }
  std::vector<int> resident_tokens;
  for (const char* device : {"none", "esp32s3"}) {
    SCOPED_TRACE(device);
    RecordingStorage recorded(file);
    SessionOptions options;
    options.prefill_batch = 1;  // one pass per token, so each pass's reads can be told apart
    if (std::string(device) != "none") options.device = GetParam().fits_16mib ? esp32s3 : &device_32mib;
    Session session;
    const Status st = session.open(recorded, tokenizer, options);
    ASSERT_TRUE(st.ok()) << st.message();
    recorded.reads.clear();  // the load's
    const char* text = "Once upon a time";
    std::size_t capacity = 0;
    ASSERT_TRUE(session.prompt_capacity(std::strlen(text), &capacity).ok());
    std::vector<std::int32_t> prompt(capacity);
    int n = 0;
    ASSERT_TRUE(session.encode(text, std::strlen(text), prompt.data(), capacity, &n).ok());
    Generated g;
    GenerateStats stats;
    SamplerParams greedy;
    greedy.temperature = 0.0f;
    const Status gen = session.generate(prompt.data(), n, 24, greedy, record, &g, &stats);
    ASSERT_TRUE(gen.ok()) << gen.message();
    if (!options.device) {
      EXPECT_EQ(stats.storage_bytes, 0u);  // every weight resident
      resident_tokens = g.tokens;
      continue;
    }
    EXPECT_EQ(g.tokens, resident_tokens);  // the same tokens, the table read from flash
    // Besides the classifier (in PSRAM here) a token reads one row of the per-layer table: one
    // read, at that token's row.
    const int passes = stats.prefill_passes + stats.decode_passes;
    EXPECT_EQ(session.plan().storage_bytes_per_token(), row);
    EXPECT_EQ(stats.storage_bytes, static_cast<std::uint64_t>(passes) * row);
    ASSERT_EQ(recorded.reads.size(), static_cast<std::size_t>(passes));
    ASSERT_LE(g.tokens.size(), recorded.reads.size());
    for (std::size_t i = 0; i < g.tokens.size(); ++i) {
      EXPECT_EQ(recorded.reads[i].first, table.offset + static_cast<std::uint64_t>(g.tokens[i]) * row) << i;
      EXPECT_EQ(recorded.reads[i].second, row) << i;
    }
  }
}

// 768 values: 24 Q4_0 blocks of 18 bytes, or 3 IQ4_XS super-blocks of 136.
INSTANTIATE_TEST_SUITE_P(Types, PleEsp32Table,
                         ::testing::Values(TableCase{"esp32-ple_q4_0.gguf", TensorType::kQ4_0, 432, false},
                                           TableCase{"esp32-ple_iq4xs.gguf", TensorType::kIQ4_XS, 408, true}),
                         [](const ::testing::TestParamInfo<TableCase>& i) {
                           return std::string(type_name(i.param.table_type));
                         });

TEST(PleEsp32, StreamedWeightsGiveTheResidentTokens) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  test::Esp32PleFiles files;
  ASSERT_FALSE(HasFailure());
  FileStorage& file = files.model;
  FileStorage& tokenizer = files.tokenizer;
  std::vector<int> resident;
  // No budget; 2.5 MB: every matrix streamed (ple_proj first, the gates and outputs after each
  // layer's FFN), the tables read row by row.
  for (std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{2500000}}) {
    SCOPED_TRACE(budget);
    SessionOptions options;
    options.seq_len = 64;
    options.budget_bytes = budget;
    options.prefill_batch = 1;  // every pass reads the per-token bytes (a block would read them once)
    Session session;
    const Status st = session.open(file, tokenizer, options);
    ASSERT_TRUE(st.ok()) << st.message();
    const std::int32_t prompt[] = {1, 9038, 2501, 263, 931};
    Generated g;
    GenerateStats stats;
    SamplerParams greedy;
    greedy.temperature = 0.0f;
    ASSERT_TRUE(session.generate(prompt, 5, 40, greedy, record, &g, &stats).ok());
    if (budget == 0) {
      resident = g.tokens;
      continue;
    }
    EXPECT_EQ(g.tokens, resident);
    const ModelSpec& spec = session.spec();
    const WeightPlacement& placement = session.placement();
    EXPECT_EQ(placement.residency(spec.tensor(kPleProj, -1)), Residency::kStreamed);
    EXPECT_EQ(placement.residency(spec.tensor(kPleGate, 5)), Residency::kStreamed);
    EXPECT_EQ(placement.residency(spec.tensor(kPleTable, -1)), Residency::kRowFetched);
    EXPECT_EQ(stats.storage_bytes, static_cast<std::uint64_t>(stats.prefill_passes + stats.decode_passes) *
                                       session.plan().storage_bytes_per_token());
  }
}

TEST(PleEsp32, EveryBackendAndThreadCountGivesReferencesTokens) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  test::Esp32PleFiles files;
  ASSERT_FALSE(HasFailure());
  FileStorage& file = files.model;
  FileStorage& tokenizer = files.tokenizer;
  std::vector<int> want;
  for (const std::string& name : test::available_kernel_names()) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(name + ", " + std::to_string(threads) + " threads");
      std::unique_ptr<ThreadPool> pool;
      if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
      SessionOptions options;
      options.kernels = find_kernels(name.c_str());
      options.parallel = pool.get();
      Session session;
      ASSERT_TRUE(session.open(file, tokenizer, options).ok());
      const std::int32_t prompt[] = {1, 9038, 2501, 263, 931};  // BOS "Once upon a time"
      Generated g;
      SamplerParams greedy;
      greedy.temperature = 0.0f;
      ASSERT_TRUE(session.generate(prompt, 5, 40, greedy, record, &g, nullptr).ok());
      if (want.empty()) want = g.tokens;  // the first backend is reference
      EXPECT_EQ(g.tokens, want);
    }
  }
  EXPECT_EQ(want.size(), 40u);
}

// tests/golden/firmware_runs.json pins the tokens the Cortex-M firmware must give for the ESP32-
// shaped model (scripts/run-firmware-golden); they are the host's, checked here on every backend.
TEST(PleEsp32, TheFirmwareGoldenRunIsTheHostsTokens) {
  POCKETLM_REQUIRE_FILES("models/tokenizer.bin");
  std::ifstream in(POCKETLM_FIRMWARE_RUNS);
  ASSERT_TRUE(in) << POCKETLM_FIRMWARE_RUNS;
  const nlohmann::json runs = nlohmann::json::parse(in);
  const nlohmann::json* run = nullptr;
  for (const nlohmann::json& c : runs)
    if (c["name"] == "esp32ple_iq4xs_greedy") run = &c;
  ASSERT_NE(run, nullptr);
  ASSERT_EQ((*run)["model"], "esp32-ple_iq4xs.gguf");
  test::Esp32PleFiles files("esp32-ple_iq4xs.gguf");
  ASSERT_FALSE(HasFailure());
  const std::string text = (*run)["prompt"].get<std::string>();
  const int steps = (*run)["steps"].get<int>();
  for (const std::string& name : test::available_kernel_names()) {
    SCOPED_TRACE(name);
    SessionOptions options;
    options.kernels = find_kernels(name.c_str());
    Session session;
    ASSERT_TRUE(session.open(files.model, files.tokenizer, options).ok());
    // The ids and the merge's scratch: len + 3 slots of kEncodeWordsPerSlot (as the firmware).
    std::vector<std::int32_t> prompt((text.size() + 3) * Tokenizer::kEncodeWordsPerSlot);
    int n = 0;
    ASSERT_TRUE(session.encode(text.data(), text.size(), prompt.data(), static_cast<int>(prompt.size()), &n).ok());
    EXPECT_EQ(std::vector<int>(prompt.begin(), prompt.begin() + n), (*run)["prompt_tokens"].get<std::vector<int>>());
    std::vector<int> next;
    SamplerParams greedy;
    greedy.temperature = 0.0f;
    ASSERT_TRUE(session.generate(prompt.data(), n, steps, greedy, test::collect_tokens, &next, nullptr).ok());
    EXPECT_EQ(next, (*run)["next_tokens"].get<std::vector<int>>());
  }
}

}  // namespace
}  // namespace pocketlm
