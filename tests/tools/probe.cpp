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
// "-" as TOKENIZER: the model's own (GGUF). Errors: one line on stderr, exit 1.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli_common.h"
#include "story_split.h"
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
  if (cmd == "logits" && argc >= 6) {
    std::vector<int> ids;
    for (int i = 5; i < argc; ++i) ids.push_back(std::atoi(argv[i]));
    return logits(argv[2], std::atoi(argv[3]), argv[4], ids);
  }
  std::fprintf(stderr, "usage: pocketlm-probe encode MODEL TOKENIZER|- TEXTFILE | logits MODEL STEPS OUT ID... | heldout N SEED\n");
  return 1;
}
