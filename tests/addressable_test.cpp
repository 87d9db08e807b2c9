// 32-bit hosts (MIPS, Xtensa): a header is validated in 64-bit arithmetic, but a tensor of
// 4 GiB or more cannot be held or indexed with a 32-bit size_t. Such a model is refused with a
// one-line error before any size becomes a size_t, never wrapped. The check takes its limit
// as a parameter, so the refusal is exercised on 64-bit hosts too; the session and CLI tests
// that depend on the host's real limit run their 32-bit half under `make test-mips`.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/llama2c_reader.h"
#include "pocketlm/io/storage.h"
#include "pocketlm/runtime/session.h"
#include "test_support.h"

namespace pocketlm {
namespace {

// v1 fp32, shared classifier: dim 8, hidden_dim 12, 1 layer, 2 heads, 2 kv heads,
// vocab_size 2^28, seq_len 4. The token embedding is 2^28 x 8 floats = 8 GiB; every other
// tensor is tiny: rms_att 8, rms_ffn 8, rms_final 8, wq/wk/wv/wo 64 each, w1/w2/w3 96 each
// = 568 floats, so the file is 256 + (2^31 + 568) * 4 bytes.
constexpr std::uint64_t kEmbeddingBytes = (std::uint64_t{1} << 28) * 8 * 4;  // 8589934592
constexpr std::uint64_t kFileBytes = 256 + kEmbeddingBytes + 568 * 4;

std::vector<unsigned char> big_header() {
  std::vector<unsigned char> h;
  test::put_i32(h, static_cast<std::int32_t>(kLlama2cMagic));
  test::put_i32(h, 1);  // version
  for (std::int32_t v : {8, 12, 1, 2, 2, 1 << 28, 4}) test::put_i32(h, v);
  h.push_back(1);  // shared classifier
  h.resize(256, 0);
  return h;
}

// The header, followed by zeros up to the size the header implies; nothing is stored.
class HeaderOnlyStorage final : public Storage {
 public:
  HeaderOnlyStorage() : header_(big_header()) {}
  const char* name() const override { return "big.bin"; }
  std::uint64_t size() const override { return kFileBytes; }
  Status read(std::uint64_t offset, void* dst, std::size_t bytes) override {
    if (offset > kFileBytes || bytes > kFileBytes - offset)
      return Status::error(StatusCode::kIoError, "read past the end");
    auto* out = static_cast<unsigned char*>(dst);
    std::memset(out, 0, bytes);
    for (std::size_t i = 0; i < bytes && offset + i < header_.size(); ++i) out[i] = header_[offset + i];
    return Status();
  }

 private:
  std::vector<unsigned char> header_;
};

TEST(Addressable, HeaderOfAnEightGiBTensorIsValid) {
  HeaderOnlyStorage storage;
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(storage, &spec).ok());
  EXPECT_EQ(spec.tensor(TensorRole::kTokenEmbedding, -1).bytes(), kEmbeddingBytes);
}

TEST(Addressable, TensorAbove32BitLimitIsRefusedInOneLine) {
  HeaderOnlyStorage storage;
  ModelSpec spec;
  ASSERT_TRUE(read_model_spec(storage, &spec).ok());
  const Status st = check_tensors_addressable("big.bin", spec, UINT32_MAX);  // a 32-bit size_t
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kOutOfMemory);
  const std::string msg = st.message();
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  for (const char* needle : {"big.bin", "token_embedding", "8589934592 bytes", "4294967295"})
    EXPECT_NE(msg.find(needle), std::string::npos) << needle << " missing from: " << msg;
  // The limit is inclusive: a tensor of exactly max_bytes is accepted.
  EXPECT_TRUE(check_tensors_addressable("big.bin", spec, kEmbeddingBytes).ok());
  EXPECT_FALSE(check_tensors_addressable("big.bin", spec, kEmbeddingBytes - 1).ok());
}

// The session applies the host's real limit: refused on 32-bit, only planned on 64-bit.
TEST(Addressable, SessionPlanRefusesOnlyWhereSizeTIs32Bits) {
  HeaderOnlyStorage storage;
  SessionPlan plan;
  const Status st = plan_session(storage, nullptr, SessionOptions{}, &plan);
  if (sizeof(std::size_t) == 4) {
    ASSERT_FALSE(st.ok());
    EXPECT_NE(std::string(st.message()).find("tensor token_embedding is 8589934592 bytes"), std::string::npos)
        << st.message();
  } else {
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_GT(plan.memory.total(), kEmbeddingBytes);
  }
}

// The CLI on a real (sparse) 8 GiB file: `run` and `convert` refuse it in one line on a
// 32-bit target. On 64-bit hosts the file is a valid model that would really be loaded.
#if SIZE_MAX == UINT32_MAX  // built for 32-bit targets only (make test-mips)
TEST(Addressable, CliRefusesAnEightGiBTensorOn32Bit) {
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/big.bin";
  test::write_file(path, big_header());
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(kFileBytes)), 0) << "cannot make a sparse 8 GiB file";
  const std::vector<std::vector<std::string>> commands = {
      {"run", path, "-z", test::model_path("tok512.bin"), "-n", "4"},
      {"convert", path, "--to", "q80", "-o", dir + "/out.bin"},
  };
  for (const auto& args : commands) {
    const test::CommandResult r = test::run_pocketlm(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args[0] << ": " << r.out;
    EXPECT_NE(r.err.find("tensor token_embedding is 8589934592 bytes"), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args[0] << ": " << r.err;
  }
  ::unlink(path.c_str());
}
#endif

}  // namespace
}  // namespace pocketlm
