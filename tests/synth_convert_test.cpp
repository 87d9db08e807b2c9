// `pocketlm synth` and `pocketlm convert`, run as a user would: the bytes fixed by
// shared/spec/synthetic-models.md, and one-line errors that leave no file behind.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <ostream>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/llama2c_reader.h"
#include "ports/posix/file_storage.h"
#include "golden_models.h"
#include "test_support.h"

namespace pocketlm::test {
namespace {

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::uint64_t file_size(const std::string& path) { return read_file(path).size(); }

TEST(SynthConvertTest, Stories15MSeed42MatchesTheSpec) {
  const std::string dir = temp_dir(), v0 = dir + "/s15.bin", q80 = dir + "/s15_q80.bin";
  CommandResult r = run_pocketlm({"synth", "stories15M", "--seed", "42", "-o", v0});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no progress bar: stderr is not a terminal
  EXPECT_EQ(file_size(v0), 60816028u);
  EXPECT_EQ(sha256_of(v0), kSynth15MSha256);
  r = run_pocketlm({"convert", v0, "--to", "q80", "-o", q80});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(file_size(q80), 17101696u);
  EXPECT_EQ(sha256_of(q80), kSynth15MQ80Sha256);
  EXPECT_EQ(list_dir(dir), (std::vector<std::string>{"s15.bin", "s15_q80.bin"}));  // no temporaries left
}

// The pin is that of shared/'s stories260K_q80.bin, which llama2.c's exporter wrote; without
// shared/, scripts/get-models makes the file by this conversion (tests/public-models.txt).
TEST(SynthConvertTest, Stories260KConvertsToTheSharedQ80File) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  const std::string out = temp_dir() + "/q80.bin";
  const CommandResult r = run_pocketlm({"convert", model_path("stories260K.bin"), "--to", "q80", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sha256_of(out), pinned_sha256("stories260K_q80.bin"));
  // The exporter's own file, where shared/ has it (the cache's copy is this conversion's).
  const std::string exporters = shared_dir() + "/models/stories260K_q80.bin";
  if (file_exists(exporters)) EXPECT_EQ(sha256_of(out), sha256_of(exporters));
}

// The same weights in v1 order (256-byte header, norms first, no freq_cis) convert to the same bytes.
TEST(SynthConvertTest, V1InputConvertsLikeV0) {
  POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  FileStorage in;
  ASSERT_TRUE(in.open(model_path("stories260K.bin").c_str(), "model").ok());
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(in, &spec).ok());
  const std::vector<unsigned char> v0 = read_file(model_path("stories260K.bin"));
  std::vector<unsigned char> v1;
  put_i32(v1, static_cast<std::int32_t>(kLlama2cMagic));
  put_i32(v1, 1);
  v1.insert(v1.end(), v0.begin(), v0.begin() + 28);  // the config
  v1.push_back(1);                                   // shared classifier
  v1.resize(kLlama2cHeaderBytes, 0);
  using K = TensorRole;
  for (K kind : {K::kRmsAtt, K::kRmsFfn, K::kRmsFinal, K::kTokenEmbedding, K::kWq, K::kWk, K::kWv, K::kWo, K::kW1,
                 K::kW2, K::kW3}) {
    const TensorInfo t = spec.tensor(kind, 0);
    const std::uint64_t bytes = t.value_bytes * (is_per_layer(kind) ? spec.config.n_layers : 1);
    v1.insert(v1.end(), v0.begin() + static_cast<long>(t.offset), v0.begin() + static_cast<long>(t.offset + bytes));
  }
  const std::string dir = temp_dir(), v1_path = dir + "/v1.bin", out = dir + "/q80.bin";
  write_file(v1_path, v1);
  const CommandResult r = run_pocketlm({"convert", v1_path, "--to", "q80", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sha256_of(out), pinned_sha256("stories260K_q80.bin"));
}

TEST(SynthConvertTest, Stories260KSynthIsAValidCheckpoint) {
  const std::string dir = temp_dir(), v0 = dir + "/s260.bin", q80 = dir + "/s260_q80.bin";
  CommandResult r = run_pocketlm({"synth", "stories260K", "--seed", "7", "-o", v0});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_pocketlm({"inspect", v0});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("llama2.c v0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nkind        llama\n"), std::string::npos) << r.out;  // llama2.c files are llama
  EXPECT_NE(r.out.find("dim 64, hidden_dim 172, n_layers 5, n_heads 8, n_kv_heads 4, vocab_size 512, seq_len 512"),
            std::string::npos)
      << r.out;
  r = run_pocketlm({"convert", v0, "--to", "q80", "--group-size", "2", "-o", q80});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_pocketlm({"inspect", q80});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("group size  2\n"), std::string::npos) << r.out;
}

struct BadInput {
  const char* name;
  std::vector<std::string> args;  // "OUT" is replaced by the output path, "DIR" by its directory
  const char* expected;           // a part of the message naming the flag and the value
};

// Names the case in ctest's listing instead of dumping the struct's bytes.
void PrintTo(const BadInput& bad, std::ostream* os) { *os << bad.name; }

class SynthConvertErrorTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(SynthConvertErrorTest, OneLineExitOneNoFile) {
  for (const std::string& a : GetParam().args) {
    if (a == "Q80") POCKETLM_REQUIRE_FILES("models/stories260K_q80.bin");
    if (a == "F32") POCKETLM_REQUIRE_FILES("models/stories260K.bin");
  }
  const std::string dir = temp_dir(), out = dir + "/out.bin";
  std::vector<std::string> args = GetParam().args;
  for (std::string& a : args) {
    if (a == "OUT") a = out;
    if (a == "DIR") a = dir + "/missing/out.bin";
    if (a == "Q80") a = model_path("stories260K_q80.bin");
    if (a == "F32") a = model_path("stories260K.bin");
  }
  const CommandResult r = run_pocketlm(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("pocketlm: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().expected), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(list_dir(dir).empty()) << "left behind: " << list_dir(dir)[0];
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, SynthConvertErrorTest,
    ::testing::Values(
        BadInput{"UnknownShape", {"synth", "stories99M", "--seed", "1", "-o", "OUT"}, "'stories99M'"},
        BadInput{"MissingSeed", {"synth", "stories260K", "-o", "OUT"}, "--seed"},
        BadInput{"SeedNotInteger", {"synth", "stories260K", "--seed", "4x2", "-o", "OUT"}, "--seed: '4x2'"},
        BadInput{"UnwritableOutput", {"synth", "stories260K", "--seed", "1", "-o", "DIR"}, "-o: cannot create"},
        BadInput{"InputNotFp32", {"convert", "Q80", "--to", "q80", "-o", "OUT"}, "not fp32"},
        BadInput{"GroupSizeNotDividing", {"convert", "F32", "--to", "q80", "--group-size", "8", "-o", "OUT"},
                 "--group-size: 8"},
        BadInput{"GroupSizeNotInteger", {"convert", "F32", "--to", "q80", "--group-size", "x", "-o", "OUT"},
                 "--group-size: 'x'"},
        BadInput{"GroupSizeZero", {"convert", "F32", "--to", "q80", "--group-size", "0", "-o", "OUT"},
                 "--group-size: 0"},
        BadInput{"UnsupportedTarget", {"convert", "F32", "--to", "q4", "-o", "OUT"}, "--to: 'q4'"},
        BadInput{"ConvertUnwritableOutput", {"convert", "F32", "--to", "q80", "-o", "DIR"}, "-o: cannot create"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace pocketlm::test
