#include "ple_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "pocketlm/format/gguf_writer.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/io/memory_storage.h"
#include "pocketlm/quant/q4_0.h"
#include "pocketlm/quant/q8_0.h"
#include "ports/posix/thread_pool.h"
#include "test_support.h"

namespace pocketlm::test::ple {

using namespace gguf;

std::vector<Tensor> ple_tensors() {
  std::vector<Tensor> t = {{"token_embd.weight", kVocab, kDim},
                           {"per_layer_token_embd.weight", kVocab, kLayers * kP},
                           {"per_layer_model_proj.weight", kLayers * kP, kDim},
                           {"per_layer_proj_norm.weight", 1, kP}};
  for (int l = 0; l < kLayers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    for (const Tensor& x : {Tensor{"attn_norm.weight", 1, kDim}, Tensor{"attn_q.weight", kDim, kDim},
                            Tensor{"attn_k.weight", kKvDim, kDim}, Tensor{"attn_v.weight", kKvDim, kDim},
                            Tensor{"attn_output.weight", kDim, kDim}, Tensor{"ffn_norm.weight", 1, kDim},
                            Tensor{"ffn_gate.weight", kHidden, kDim}, Tensor{"ffn_down.weight", kDim, kHidden},
                            Tensor{"ffn_up.weight", kHidden, kDim}, Tensor{"inp_gate.weight", kP, kDim},
                            Tensor{"proj.weight", kDim, kP}, Tensor{"post_norm.weight", 1, kDim}})
      t.push_back({b + x.name, x.rows, x.cols});
  }
  t.push_back({"output_norm.weight", 1, kDim});
  return t;
}

std::vector<float> values_of(const Tensor& t) {
  std::uint32_t seed = 2166136261u;
  for (char c : t.name) seed = (seed ^ static_cast<unsigned char>(c)) * 16777619u;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(t.rows) * static_cast<std::size_t>(t.cols));
  const float scale = t.rows == 1 ? 0.25f : 1.7f / std::sqrt(static_cast<float>(t.cols));
  for (float& x : v) x = t.rows == 1 ? 1.0f + scale * u(rng) : scale * u(rng);
  return v;
}

std::vector<unsigned char> ple_file(const FileOptions& o) {
  std::vector<Tensor> tensors;
  for (Tensor t : ple_tensors()) {
    if (t.name == o.drop) continue;
    if (t.name == "per_layer_token_embd.weight") t.cols = o.table_cols;
    tensors.push_back(t);
  }
  test::VectorSink sink;
  GgufWriter w(sink);
  const std::string a = "pocketlm-ple.";
  EXPECT_TRUE(w.begin(tensors.size(), 10).ok());
  EXPECT_TRUE(w.kv_string(key::kArchitecture, "pocketlm-ple").ok());
  for (const auto& [k, v] : std::vector<std::pair<std::string, int>>{{"context_length", kSeq},
                                                                     {"embedding_length", kDim},
                                                                     {"feed_forward_length", kHidden},
                                                                     {"block_count", kLayers},
                                                                     {"attention.head_count", kHeads},
                                                                     {"attention.head_count_kv", kKvHeads},
                                                                     {"embedding_length_per_layer_input", o.p_key}})
    EXPECT_TRUE(w.kv_u32((a + k).c_str(), static_cast<std::uint32_t>(v)).ok());
  EXPECT_TRUE(w.kv_f32((a + "attention.layer_norm_rms_epsilon").c_str(), 1e-5f).ok());
  EXPECT_TRUE(w.kv_u32((a + "rope.dimension_count").c_str(), kDim / kHeads).ok());
  std::vector<std::uint32_t> types;
  std::vector<std::uint64_t> sizes;
  for (const Tensor& t : tensors) {
    const std::uint32_t type = t.rows == 1 ? kGgmlF32 : o.matrix_type;
    std::uint64_t bytes = 0;
    EXPECT_TRUE(w.tensor_info(t.name.c_str(), static_cast<std::uint64_t>(t.rows), static_cast<std::uint64_t>(t.cols),
                              type, &bytes)
                    .ok())
        << t.name;
    types.push_back(type);
    sizes.push_back(bytes);
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::vector<float> v = values_of(tensors[i]);
    std::vector<unsigned char> bytes(static_cast<std::size_t>(sizes[i]));
    if (types[i] == kGgmlQ8_0)
      quantize_q8_0(v.data(), v.size(), bytes.data());
    else if (types[i] == kGgmlQ4_0)
      quantize_q4_0(v.data(), v.size(), bytes.data());
    else
      std::memcpy(bytes.data(), v.data(), bytes.size());
    EXPECT_TRUE(w.begin_tensor(sizes[i]).ok());
    EXPECT_TRUE(w.tensor_data(bytes.data(), bytes.size()).ok());
  }
  EXPECT_TRUE(w.finish().ok());
  return sink.bytes();
}

std::vector<float> engine_logits(const std::vector<unsigned char>& file, const Kernels& kernels, int threads,
                                 int batch) {
  MemoryStorage storage(file.data(), file.size(), "ple.gguf");
  ModelSpec spec;
  const Status read = read_model_spec(storage, &spec);
  EXPECT_TRUE(read.ok()) << read.message();
  test::LoadedModel loaded(storage, spec, kSeq, kernels, batch);
  Model* model = loaded.model;
  if (!model) return {};
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) {
    pool = std::make_unique<ThreadPool>(threads);
    model->set_parallel(pool.get());
  }
  std::vector<float> out;
  int pos = 0;
  if (batch > 1) {
    model->forward_batch(kPrompt, 4, 0);
    pos = 4;
  }
  int token = kPrompt[pos];
  for (; pos < kSeq && pos < 14; ++pos) {
    const float* l = model->forward(token, pos);
    out.insert(out.end(), l, l + kVocab);
    int best = 0;
    for (int i = 1; i < kVocab; ++i) best = l[i] > l[best] ? i : best;
    token = pos + 1 < static_cast<int>(std::size(kPrompt)) ? kPrompt[pos + 1] : best;
  }
  return out;
}

}  // namespace pocketlm::test::ple
