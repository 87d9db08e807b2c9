// pocketlm-probe: what the training tests (train/parity.py, tests/train_*) need to see of the
// engine beyond `pocketlm run`'s text and token log.
//
//   pocketlm-probe encode MODEL TOKENIZER|- TEXTFILE
//       one line per story of TEXTFILE (stories as `pocketlm eval` cuts them, all of them):
//       the ids the engine's encoder gives (BOS first), space-separated.
//   pocketlm-probe logits MODEL STEPS OUT ID...
//       feeds the ids from position 0, then STEPS greedy tokens (argmax, the first maximum);
//       prints the ids fed after the prompt on stdout (one line) and writes the logits of every
//       forward pass from the last prompt id on to OUT as float32 [STEPS, vocab].
//   pocketlm-probe heldout N SEED
//       the indices among 0..N-1 of the stories the held-out split takes, one line.
//   pocketlm-probe schema
//       the engine's role table and architecture rows as JSON (train/schema.py): what each
//       tensor role is called in llama2.c and GGUF, its shape and use, and per architecture
//       its hyperparameter keys, the config fields they fill and its roles. The trainer's GGUF
//       writer takes every name from it.
// "-" as TOKENIZER: the model's own (GGUF). Errors: one line on stderr, exit 1.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "story_split.h"
#include "pocketlm/format/architecture.h"
#include "pocketlm/format/tensor_role.h"
#include "pocketlm/runtime/session.h"
#include "ports/posix/file_storage.h"

namespace {

using namespace pocketlm;
using namespace pocketlm::cli;

struct Opened {
  FileStorage model, tokenizer_file;
  Session session;
};

Status open(const std::string& model, const std::string& tokenizer, Opened* o) {
  POCKETLM_TRY(o->model.open(model.c_str(), "model"));
  Storage* use = nullptr;
  std::string label, warning;
  POCKETLM_TRY(open_tokenizer(tokenizer == "-" ? "" : tokenizer, o->model, &o->tokenizer_file, &use, &label, &warning));
  SessionOptions options;
  return o->session.open(o->model, use, options);
}

int encode(const std::string& model, const std::string& tokenizer, const std::string& path) {
  Opened o;
  Status st = open(model, tokenizer, &o);
  if (!st.ok()) return fail(st);
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(path + ": cannot open text file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::string_view story : split_stories(text)) {
    std::vector<std::int32_t> ids((story.size() + 3) * Tokenizer::kEncodeWordsPerSlot);
    int n = 0;
    st = o.session.tokenizer().encode(story.data(), story.size(), true, false, ids.data(), ids.size(), &n);
    if (!st.ok()) return fail(path + ": " + st.message());
    for (int i = 0; i < n; ++i) std::printf(i ? " %d" : "%d", ids[static_cast<std::size_t>(i)]);
    std::printf("\n");
  }
  return 0;
}

int logits(const std::string& model, int steps, const std::string& out_path, const std::vector<int>& prompt) {
  Opened o;
  Status st = open(model, "-", &o);
  if (!st.ok()) return fail(st);
  const int vocab = o.session.spec().config.vocab_size;
  const int n = static_cast<int>(prompt.size());
  if (n < 1 || n + steps > o.session.seq_len())
    return fail("logits: " + std::to_string(n) + " prompt ids and " + std::to_string(steps) +
                " steps do not fit the context of " + std::to_string(o.session.seq_len()));
  for (int id : prompt)
    if (id < 0 || id >= vocab) return fail("logits: id " + std::to_string(id) + " is outside the vocabulary");
  std::FILE* out = std::fopen(out_path.c_str(), "wb");
  if (!out) return fail(out_path + ": cannot open for writing");
  int token = prompt[0];
  for (int pos = 0; pos < n - 1 + steps; ++pos) {
    const float* l = o.session.model().forward(token, pos);
    if (pos + 1 < n) {
      token = prompt[static_cast<std::size_t>(pos + 1)];
      continue;
    }
    std::fwrite(l, sizeof(float), static_cast<std::size_t>(vocab), out);
    int best = 0;
    for (int i = 1; i < vocab; ++i)
      if (l[i] > l[best]) best = i;
    token = best;
    std::printf(pos + 1 == n ? "%d" : " %d", token);
  }
  std::printf("\n");
  if (std::fclose(out) != 0) return fail(out_path + ": write failed");
  return 0;
}

const char* use_name(TensorUse u) {
  switch (u) {
    case TensorUse::kMatmul: return "matmul";
    case TensorUse::kNorm: return "norm";
    case TensorUse::kRowGather: return "row-gather";
    default: return "unused";
  }
}

// Every architecture this build knows.
std::vector<const Architecture*> architectures() {
  std::vector<const Architecture*> out;
  char names[256];
  architecture_names(names, sizeof names);
  for (std::string_view rest = names; !rest.empty();) {
    const std::size_t cut = rest.find(", ");
    out.push_back(find_architecture(std::string(rest.substr(0, cut)).c_str()));
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 2);
  }
  return out;
}

// One role's row as the schema prints it; a kind parameter in a shape by the kind's name for it.
nlohmann::json role_json(const RoleInfo& r, const char* const* params) {
  char rows[48], cols[48];
  return {{"name", r.name},
          {"gguf_name", r.gguf_name ? nlohmann::json(r.gguf_name) : nlohmann::json(nullptr)},
          {"per_layer", r.per_layer},
          {"use", use_name(r.use)},
          {"shape", {extent_name(r.rows, params, rows, sizeof rows), extent_name(r.cols, params, cols, sizeof cols)}}};
}

int schema() {
  // The shared rows, then each kind's own, in role-id order.
  nlohmann::json roles = nlohmann::json::array();
  for (const RoleInfo& r : kRoleTable) roles.push_back(role_json(r, nullptr));
  nlohmann::json archs = nlohmann::json::array();
  for (const Architecture* a : architectures()) {
    for (const RoleInfo& r : a->kind_roles) {
      bool listed = false;  // a kind that extends another shares its rows
      for (const nlohmann::json& j : roles) listed = listed || (r.name && j["name"] == r.name);
      if (r.name && !listed) roles.push_back(role_json(r, a->param_names));
    }
    nlohmann::json keys = nlohmann::json::array(), arch_roles = nlohmann::json::array(),
                   required = nlohmann::json::array(), order = nlohmann::json::array();
    for (int i = 0; i < a->key_count; ++i)
      keys.push_back({{"suffix", a->keys[i].suffix}, {"field", config_field_name(*a, a->keys[i].field)},
                      {"required", a->keys[i].required}});
    for (int r = 0; r < kTensorRoleCount; ++r) {
      const auto role = static_cast<TensorRole>(r);
      if (a->roles & role_bit(role)) arch_roles.push_back(role_info(*a, role).name);
      if (a->required & role_bit(role)) required.push_back(role_info(*a, role).name);
    }
    for (int i = 0; i < a->forward_count; ++i) order.push_back(role_info(*a, a->forward[i]).name);
    archs.push_back({{"name", a->name}, {"keys", keys}, {"roles", arch_roles}, {"required", required}, {"order", order}});
  }
  std::printf("%s\n", nlohmann::json({{"roles", roles}, {"architectures", archs}}).dump(1).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "encode" && argc == 5) return encode(argv[2], argv[3], argv[4]);
  if (cmd == "heldout" && argc == 4) {
    const long long n = std::atoll(argv[2]);
    const std::uint64_t seed = std::strtoull(argv[3], nullptr, 10);
    for (long long i = 0, k = 0; i < n; ++i)
      if (is_heldout_story(static_cast<std::uint64_t>(i), seed)) std::printf(k++ ? " %lld" : "%lld", i);
    std::printf("\n");
    return 0;
  }
  if (cmd == "schema" && argc == 2) return schema();
  if (cmd == "logits" && argc >= 6) {
    std::vector<int> ids;
    for (int i = 5; i < argc; ++i) ids.push_back(std::atoi(argv[i]));
    return logits(argv[2], std::atoi(argv[3]), argv[4], ids);
  }
  std::fprintf(stderr, "usage: pocketlm-probe encode MODEL TOKENIZER|- TEXTFILE | logits MODEL STEPS OUT ID... | heldout N SEED | schema\n");
  return 1;
}
