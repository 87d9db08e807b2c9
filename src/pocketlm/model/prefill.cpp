// Batched prefill's buffers: the activations of a block of prompt tokens and their quantized
// inputs. The blocks of model/blocks.h run over such a block as over one token's rows: every
// matmul is one pass over the weights for all tokens (kernels/batch.h), so a block of B tokens
// reads each weight byte once instead of B times, from RAM or from storage, while everything
// per token (norms, RoPE, attention, SwiGLU, the residual adds, the activation quantization)
// is the single-token arithmetic on that token's row, so each token's bits are those of run.c.
#include "pocketlm/base/checked.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/model/blocks.h"

namespace pocketlm {

Status BatchState::carve(const ModelConfig& c, int seq_len, int rows, bool batched_attention, Arena& arena) {
  batch = rows > 1 ? rows : 0;
  if (batch == 0) return Status();
  std::uint64_t dim = 0, hidden = 0, scores = 0;
  if (!checked_product(&dim, static_cast<std::uint64_t>(batch), static_cast<std::uint64_t>(c.dim), 1u))
    return Status::error(StatusCode::kOutOfMemory, "prefill batch: %d tokens x dim %d overflows", batch, c.dim);
  if (!checked_product(&hidden, static_cast<std::uint64_t>(batch), static_cast<std::uint64_t>(c.hidden_dim), 1u))
    return Status::error(StatusCode::kOutOfMemory, "prefill batch: %d tokens x hidden_dim %d overflows", batch,
                         c.hidden_dim);
  if (batched_attention) {
    if (!checked_product(&scores, static_cast<std::uint64_t>(c.n_heads) * kAttentionQueryTile,
                         static_cast<std::uint64_t>(seq_len), 1u))
      return Status::error(StatusCode::kOutOfMemory,
                           "prefill batch: scores of n_heads %d x %d queries x seq_len %d overflow", c.n_heads,
                           kAttentionQueryTile, seq_len);
    POCKETLM_TRY(carve_array(arena, region::kPrefill, scores, &att));
  }
  POCKETLM_TRY(carve_array(arena, region::kPrefill, dim, &x));
  POCKETLM_TRY(carve_array(arena, region::kPrefill, dim, &xb));
  POCKETLM_TRY(carve_array(arena, region::kPrefill, dim, &xb2));
  POCKETLM_TRY(carve_array(arena, region::kPrefill, dim, &q));
  POCKETLM_TRY(carve_array(arena, region::kPrefill, hidden, &hb));
  return carve_array(arena, region::kPrefill, hidden, &hb2);
}

Status BlockOps::carve_batch(const ModelSpec& spec, int batch, Arena& arena) {
  if (batch <= 1) return Status();
  const std::uint64_t widest = widest_matmul_input(spec);
  for (int a = 0; a < kTensorTypeCount; ++a) {
    if (group_[a] == 0) continue;  // carve() found no matrix reading this activation type
    const auto act = static_cast<TensorType>(a);
    std::uint64_t values = 0, scales = 0;
    if (!activation_row_bytes(act, widest, group_[a], &values, &scales))
      return Status::error(StatusCode::kBadFormat, "prefill batch: group size %d does not divide %llu", group_[a],
                           static_cast<unsigned long long>(widest));
    // One row per token, each as wide as the widest input, so token t starts at t * row.
    unsigned char* v = nullptr;
    float* s = nullptr;
    POCKETLM_TRY(carve_array(arena, region::kPrefill, values * static_cast<std::uint64_t>(batch), &v));
    POCKETLM_TRY(carve_array(arena, region::kPrefill, scales / sizeof(float) * static_cast<std::uint64_t>(batch), &s));
    batch_input_[a] = ActivationBatch{v, s, 0, group_[a], 0, static_cast<std::size_t>(values),
                                      static_cast<std::size_t>(scales / sizeof(float))};
  }
  return Status();
}

}  // namespace pocketlm
