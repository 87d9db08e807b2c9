// Where a decode token's matmul instructions go, tensor by tensor, on the board's own ISA: the
// model file's header (read from the host through semihosting) gives every matrix a token
// multiplies (its role, shape and type, and the token embedding when it is also the classifier);
// each distinct one is multiplied once with the board's default backend and with tiled4, timed
// with the instruction clock (board.h), on weights of its type and shape (a taller matrix than 64
// rows from two shorter ones: instructions(k, job)).
// The weights are arbitrary bytes and the activations quantized from arbitrary floats: the
// kernels branch on shapes, not on values, so the counts are those of the model's own weights.
// Prints one line per tensor; scripts/run-firmware-golden prints the table, docs/porting.md keeps it.
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <unistd.h>

#include "pocketlm/base/format.h"
#include "pocketlm/format/model_reader.h"
#include "pocketlm/format/tensor_role.h"
#include "pocketlm/kernels/kernels.h"
#include "pocketlm/quant/tensor_type.h"
#include "ports/firmware/board.h"
#include "ports/firmware/say.h"
#include "ports/firmware/semihosting_storage.h"

namespace {

using namespace pocketlm;
namespace fw = pocketlm::firmware;
using fw::say;

constexpr int kMaxRows = 64, kMaxCols = 1024;  // 330 KB: an ESP32-S3's SRAM holds it
alignas(16) unsigned char g_weights[kMaxRows * kMaxCols * 4];  // the largest: f32
alignas(16) float g_scales[kMaxRows * kMaxCols / 4];           // q80's stream, group size >= 4
alignas(16) unsigned char g_act[kMaxCols * 4];
alignas(16) float g_act_scales[kMaxCols];
alignas(16) float g_x[kMaxCols], g_out[kMaxRows];

std::uint32_t g_rng = 2463534242u;
std::uint32_t next() {  // xorshift32
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return g_rng;
}

// One matrix a decode token multiplies: a role (the tensors of every layer share a row), its
// shape and type, and how many times a token multiplies it.
struct Job {
  const char* name;
  TensorType type;
  int rows, cols, group, per_token;
};

// Instructions of one matmul of the first `rows` rows of `job` with backend `k`.
std::uint64_t instructions(const Kernels& k, const Job& job, int rows) {
  const int il = interleave_of(k, job.type, job.group);
  const TypeTraits& t = type_traits(job.type);
  const std::size_t bytes = row_value_bytes(job.type, static_cast<std::size_t>(job.cols), job.group) * rows;
  for (std::size_t i = 0; i < bytes; ++i) g_weights[i] = static_cast<unsigned char>(next());
  if (t.float_value_bits == 32)  // finite floats, as a loaded model's are
    for (std::size_t i = 0; i < bytes / 4; ++i) reinterpret_cast<float*>(g_weights)[i] = static_cast<float>(next() % 2001) / 1e5f;
  for (int i = 0; job.group > 0 && i < rows * job.cols / job.group; ++i) g_scales[i] = 0.01f;
  for (int j = 0; j < job.cols; ++j) g_x[j] = static_cast<float>(static_cast<int>(next() % 2001) - 1000) / 500.0f;
  Activation act{g_x, nullptr, job.cols, 0};
  if (t.activation != TensorType::kF32) {
    const int group = t.activation == job.type ? job.group : block_elements(t.activation, 0);
    k.quantize_act[type_index(t.activation)](g_x, job.cols, group, g_act, g_act_scales);
    act = Activation{g_act, g_act_scales, job.cols, group};
  }
  const Matrix m{job.type, rows, job.cols, g_weights, t.stream_scale_bytes ? g_scales : nullptr, job.group, il};
  const std::uint64_t t0 = fw::clock_ticks();
  k.matmul[type_index(job.type)](g_out, m, act, rows);
  return (fw::clock_ticks() - t0) * fw::instructions_per_tick();
}

// Instructions of one whole matmul of `job`: measured when it has at most kMaxRows rows, else as
// a + b * rows from kMaxRows and kMaxRows / 2 rows (a call's fixed part, then a cost per row: the
// kernels cost the same per block of 4 rows).
double instructions(const Kernels& k, const Job& job) {
  if (job.rows <= kMaxRows) return static_cast<double>(instructions(k, job, job.rows));
  const double full = static_cast<double>(instructions(k, job, kMaxRows));
  const double half = static_cast<double>(instructions(k, job, kMaxRows / 2));
  const double per_row = (full - half) / (kMaxRows / 2);
  return full + per_row * (job.rows - kMaxRows);
}

}  // namespace

int main() {
  fw::start_clock();
  fw::SemihostingStorage file(POCKETLM_MODEL_HOST_FILE);
  static ModelSpec spec;
  Status st = file.status();
  if (st.ok()) st = read_model_spec(file, &spec);
  if (!st.ok()) {
    say("error: %s", st.message());
    return 1;
  }
  // The matrices a decode token multiplies, one job per role (and type and shape).
  static Job jobs[64];
  int n_jobs = 0;
  auto add = [&](const char* name, const TensorInfo& ti) {
    for (int i = 0; i < n_jobs; ++i)
      if (jobs[i].name == name && jobs[i].type == ti.type && jobs[i].rows == static_cast<int>(ti.rows) &&
          jobs[i].cols == static_cast<int>(ti.cols)) {
        ++jobs[i].per_token;
        return true;
      }
    if (n_jobs == 64 || ti.cols > kMaxCols) return false;
    jobs[n_jobs++] = {name, ti.type, static_cast<int>(ti.rows), static_cast<int>(ti.cols), ti.group, 1};
    return true;
  };
  for (int i = 0; i < spec.tensor_count(); ++i) {
    const TensorInfo ti = spec.tensor(i);
    // The role's row in the model kind's schema: a kind's own roles are named there.
    if (ti.schema->use == TensorUse::kMatmul && !add(ti.schema->name, ti)) {
      say("error: %s: too many matrices or too wide for the bench", ti.schema->name);
      return 1;
    }
  }
  if (spec.shared_classifier && spec.has(TensorRole::kTokenEmbedding) &&
      !add("classifier (the token embedding)", spec.tensor(TensorRole::kTokenEmbedding, -1))) {
    say("error: the token embedding is too wide for the bench");
    return 1;
  }
  say("kernel bench: %s on %s, %d matrices a decode token", file.name(), fw::isa_name(), n_jobs);
  const char* backends[] = {POCKETLM_FIRMWARE_KERNELS, "tiled4"};
  for (int b = 0; b < 2; ++b) {
    if (b == 1 && std::strcmp(backends[0], backends[1]) == 0) break;
    const Kernels* k = find_kernels(backends[b]);
    if (!k) {
      say("error: no backend %s in this build", backends[b]);
      return 1;
    }
    double total = 0, macs = 0;
    for (int i = 0; i < n_jobs; ++i) {
      const Job& job = jobs[i];
      const double per_token = instructions(*k, job) * job.per_token;
      const double mac = static_cast<double>(job.rows) * job.cols * job.per_token;
      total += per_token;
      macs += mac;
      say("matmul %s: %s %s [%d, %d] x%d: %.3f M instructions a token, %.2f a multiply-add", k->name, job.name,
          type_name(job.type), job.rows, job.cols, job.per_token, per_token / 1e6, per_token / mac);
    }
    say("matmul %s: all: %.3f M instructions a token, %.2f a multiply-add (%.3f M multiply-adds)", k->name,
        total / 1e6, total / macs, macs / 1e6);
  }
  return 0;
}
