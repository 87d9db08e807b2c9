// The precomputed RoPE angles rotate exactly as run.c's on-the-fly powf/cosf/sinf loop.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "pocketlm/kernels/reference.h"
#include "pocketlm/model/rope_table.h"

namespace pocketlm {
namespace {

TEST(RopeTable, SameBitsAsTheReferenceLoop) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const int shapes[][3] = {{64, 32, 8}, {288, 288, 48}, {512, 128, 64}, {12, 4, 2}};  // dim, kv_dim, head_size
  for (auto [dim, kv_dim, head_size] : shapes) {
    const int seq_len = 1024;
    std::vector<float> cos_table(static_cast<std::size_t>(seq_len * head_size / 2)), sin_table(cos_table.size());
    fill_rope_table(seq_len, head_size, 10000.0f, cos_table.data(), sin_table.data());
    for (int pos : {0, 1, 2, 100, 511, 1023}) {
      std::vector<float> q(static_cast<std::size_t>(dim)), k(static_cast<std::size_t>(kv_dim));
      for (float& v : q) v = dist(rng);
      for (float& v : k) v = dist(rng);
      auto q_ref = q, k_ref = k;
      reference::rope(q_ref.data(), k_ref.data(), dim, kv_dim, head_size, pos);
      const std::size_t row = static_cast<std::size_t>(pos * head_size / 2);
      apply_rope(q.data(), k.data(), dim, kv_dim, head_size, cos_table.data() + row, sin_table.data() + row);
      EXPECT_EQ(std::memcmp(q.data(), q_ref.data(), q.size() * 4), 0) << "q at pos " << pos;
      EXPECT_EQ(std::memcmp(k.data(), k_ref.data(), k.size() * 4), 0) << "k at pos " << pos;
    }
  }
}

}  // namespace
}  // namespace pocketlm
