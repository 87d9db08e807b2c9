// Per-layer-embedding files (docs/ple.md): bad files get one-line errors naming the tensor and the
// field; convert keeps the kind, takes a type per role and falls back where IQ4_XS cannot hold a
// row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/ple_schema.h"
#include "pocketlm/io/memory_storage.h"
#include "ple_file.h"
#include "ports/posix/file_storage.h"
#include "test_support.h"

namespace pocketlm {
namespace {

using namespace gguf;
using namespace test::ple;

// ---- Bad files ------------------------------------------------------------------------------

std::string read_error(const std::vector<unsigned char>& file) {
  MemoryStorage storage(file.data(), file.size(), "ple.gguf");
  ModelSpec spec;
  const Status st = read_model_spec(storage, &spec);
  return st.ok() ? "" : st.message();
}

TEST(PleFile, BadFilesNameTheTensorAndTheField) {
  EXPECT_EQ(read_error(ple_file()), "");
  FileOptions missing;
  missing.drop = "per_layer_model_proj.weight";
  EXPECT_EQ(read_error(ple_file(missing)), "ple.gguf: GGUF tensor per_layer_model_proj.weight is missing");
  FileOptions gate;
  gate.drop = "blk.1.inp_gate.weight";
  EXPECT_NE(read_error(ple_file(gate)).find("blk.1.inp_gate.weight"), std::string::npos);
  FileOptions wrong_p;
  wrong_p.p_key = 16;
  EXPECT_EQ(read_error(ple_file(wrong_p)),
            "ple.gguf: GGUF tensor per_layer_token_embd.weight has shape [96, 64] (rows, columns); expected "
            "[vocab_size, 32] (columns: n_layers x per_layer_dim)");
  FileOptions table;
  table.table_cols = kLayers * kP + 32;
  EXPECT_EQ(read_error(ple_file(table)),
            "ple.gguf: GGUF tensor per_layer_token_embd.weight has shape [96, 96] (rows, columns); expected "
            "[vocab_size, 64] (columns: n_layers x per_layer_dim)");
}

// An IQ4_XS tensor whose rows are not whole super-blocks: the file's table (64 columns) with
// its type field changed from Q4_0 to IQ4_XS (23) in place.
TEST(PleFile, IQ4_XSRowsMustBeWholeSuperBlocks) {
  FileOptions o;
  o.matrix_type = kGgmlQ4_0;
  std::vector<unsigned char> file = ple_file(o);
  const std::string name = "per_layer_token_embd.weight";
  const auto at = std::search(file.begin(), file.end(), name.begin(), name.end()) - file.begin();
  const std::size_t type_at = static_cast<std::size_t>(at) + name.size() + 4 + 2 * 8;  // n_dims, 2 dims
  ASSERT_EQ(file[type_at], kGgmlQ4_0);
  file[type_at] = kGgmlIQ4_XS;
  EXPECT_EQ(read_error(file),
            "ple.gguf: GGUF tensor per_layer_token_embd.weight has 64 columns, not a multiple of IQ4_XS's block of 256");
}

TEST(PleFile, ConvertKeepsTheKindAndTakesATypePerRole) {
  const std::string dir = test::temp_dir();
  const std::string in = dir + "/ple.gguf", out = dir + "/ple-q.gguf", v2 = dir + "/ple.bin";
  test::write_file(in, ple_file());
  const std::string before = test::sha256_of(in);
  const test::CommandResult r = test::run_pocketlm(
      {"convert", in, "--to", "gguf", "--type", "q8_0", "--tensor-type", "ple_table=q4_0", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("matrices q8_0, ple_table q4_0"), std::string::npos) << r.out;
  FileStorage converted;
  ASSERT_TRUE(converted.open(out.c_str(), "model").ok());
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(converted, &spec).ok());
  EXPECT_STREQ(spec.architecture, "pocketlm-ple");
  EXPECT_EQ(per_layer_dim(spec.config), kP);
  EXPECT_EQ(spec.type(kPleTable), TensorType::kQ4_0);
  EXPECT_EQ(spec.type(kPleGate), TensorType::kQ8_0);
  EXPECT_EQ(spec.type(kPlePostNorm), TensorType::kF32);
  // A llama2.c file cannot hold the PLE tensors: refused, nothing written, the input as it was.
  const test::CommandResult q80 = test::run_pocketlm({"convert", in, "--to", "q80", "-o", v2});
  EXPECT_EQ(q80.exit_code, 1);
  EXPECT_EQ(q80.err, "pocketlm: error: " + in + ": architecture 'pocketlm-ple' has tensors a llama2.c file cannot "
                     "hold (use --to gguf)\n");
  EXPECT_FALSE(test::file_exists(v2));
  const test::CommandResult norm =
      test::run_pocketlm({"convert", in, "--to", "gguf", "--tensor-type", "ple_post_norm=q4_0", "-o", v2});
  EXPECT_EQ(norm.exit_code, 1);
  EXPECT_NE(norm.err.find("--tensor-type: 'ple_post_norm=q4_0' names no matrix"), std::string::npos) << norm.err;
  EXPECT_EQ(test::sha256_of(in), before);
}

// IQ4_XS needs rows of whole 256-value super-blocks: this file's 64- and 32-column matrices are
// written Q4_0 instead, and the summary says which.
TEST(PleFile, IQ4_XSFallsBackToQ4_0ForShortRows) {
  const std::string dir = test::temp_dir();
  const std::string in = dir + "/ple.gguf", out = dir + "/ple-iq.gguf";
  test::write_file(in, ple_file());
  const test::CommandResult r = test::run_pocketlm(
      {"convert", in, "--to", "gguf", "--type", "q8_0", "--tensor-type", "ple_table=iq4_xs", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ple_table iq4_xs, no tokenizer (give -z to run it); Q4_0 for per_layer_token_embd.weight "
                       "(columns not a multiple of 256)"),
            std::string::npos)
      << r.out;
  FileStorage converted;
  ASSERT_TRUE(converted.open(out.c_str(), "model").ok());
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(converted, &spec).ok());
  EXPECT_EQ(spec.type(kPleTable), TensorType::kQ4_0);
  EXPECT_EQ(spec.type(kPleGate), TensorType::kQ8_0);
}

}  // namespace
}  // namespace pocketlm
