// `pocketlm eval MODEL TEXTFILE`: how well a model predicts a text, and with --against BASE how
// far its next-token distributions are from another model's (what a quantization costs).
//
// The text is cut into stories at lines holding only <|endoftext|>; every story is read, or with
// --split heldout only the trainer's held-out 5 % (story_split.h: SplitMix64(seed + i) % 100 >= 95,
// seed 42), what `python3 -m train.run` measures its validation loss on. Each story is
// encoded as `run` encodes a prompt (BOS, then SentencePiece's leading space) and every token
// after BOS is predicted exactly once: a story longer than the context is read in windows of
// --seq-len tokens starting every --stride tokens (default half the context), each window fed
// from position 0, and a token is scored in the first window that predicts it (so it has at
// least seq_len - stride tokens of context, or all before it).
//
// Reported: mean cross-entropy in nats per scored token, perplexity exp(CE), and bits per UTF-8
// byte = (sum of the tokens' -log2 p) / (bytes of the stories' text): comparable across
// tokenizers. With --against BASE (the same tokenizer, piece for piece), fed the same tokens: mean
// KL(P_BASE || P_MODEL) in nats per scored token and how often both give the same most likely
// token (llama.cpp's perplexity tool reports the same pair for quantized models). All sums are
// in double; log-softmax subtracts the maximum logit.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "json_output.h"
#include "progress_bar.h"
#include "story_split.h"
#include "pocketlm/format/file_kind.h"
#include "pocketlm/runtime/session.h"
#include "pocketlm/text/utf8_stream.h"
#include "ports/posix/file_storage.h"
#include "ports/posix/thread_pool.h"

namespace pocketlm::cli {

void add_eval_command(CLI::App& app, EvalOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "eval", "cross-entropy, perplexity and bits per byte of a model on a text; --against: KL and top-1 agreement");
  add_model_argument(cmd, &o.model);
  cmd->add_option("text", o.text, "UTF-8 text, stories separated by <|endoftext|> lines (-: stdin)")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--against", o.against, "base model (same tokenizer): report mean KL(base || model) and top-1 agreement")
      ->type_name("FILE");
  cmd->add_option("--split", o.split, "stories read: all (default) or heldout (the trainer's fixed 5 % held out)")
      ->type_name("heldout|all");
  cmd->add_option("--split-seed", o.split_seed, "seed of the held-out split (default 42)")->type_name("INT");
  cmd->add_option("--stories", o.stories, "read at most this many stories of the split (default: all)")->type_name("INT");
  cmd->add_option("--stride", o.stride, "tokens between window starts, at most the window (default: half of it)")
      ->type_name("INT");
  add_session_flags(cmd, kCmdEval, &o);
  add_json_flag(cmd, &o.json);
}

namespace {

// A session for one model with its tokenizer (-z or the model's own).
struct Opened {
  ModelFiles files;
  Session session;
};

Status open_model(const std::string& path, const std::string& z, const SessionOptions& options, Opened* o) {
  POCKETLM_TRY(o->files.open(path, z));
  POCKETLM_TRY(open_session(o->files, options, &o->session));
  if (!o->files.tokenizer_warning.empty()) warn(o->files.tokenizer_warning);
  return Status();
}

// log(sum(exp(l))) over n logits, in double.
double log_sum_exp(const float* l, int n) {
  double max = l[0];
  for (int i = 1; i < n; ++i) max = l[i] > max ? l[i] : max;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(static_cast<double>(l[i]) - max);
  return max + std::log(sum);
}

int argmax(const float* l, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (l[i] > l[best]) best = i;
  return best;
}

// KL(P || Q) for logits p, q.
double kl_divergence(const float* p, const float* q, int n) {
  const double lp = log_sum_exp(p, n), lq = log_sum_exp(q, n);
  double kl = 0;
  for (int i = 0; i < n; ++i) {
    const double log_p = p[i] - lp;
    kl += std::exp(log_p) * (log_p - (q[i] - lq));
  }
  return kl;
}

struct Totals {
  double nll = 0, kl = 0;
  std::uint64_t tokens = 0, bytes = 0, agree = 0, windows = 0;
};

// A piece as the errors show it: printable ASCII as is, other bytes as \n or \xHH, quoted.
std::string shown(Piece p) {
  std::string s = "'";
  for (std::size_t i = 0; i < p.size; ++i) {
    const unsigned char c = p.data[i];
    char hex[8];
    if (c == '\n') {
      s += "\\n";
    } else if (c < 0x20 || c >= 0x7F || c == '\'' || c == '\\') {
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      s += hex;
    } else {
      s += static_cast<char>(c);
    }
  }
  return s + "'";
}

// KL and top-1 agreement compare the distributions token id by token id: they mean something
// only when both models give each id the same piece (a vocabulary of the same size is not
// enough: two 512-piece tokenizers trained on different text share little beyond the bytes).
Status same_tokenizer(const EvalOptions& o, const Tokenizer& model, const Tokenizer& base) {
  if (base.vocab_size() != model.vocab_size())
    return Status::error(StatusCode::kInvalidArgument,
                         "--against %s: vocab_size %d differs from %s's %d: KL needs the same tokenizer",
                         o.against.c_str(), base.vocab_size(), o.model.c_str(), model.vocab_size());
  for (int id = 0; id < model.vocab_size(); ++id) {
    const Piece a = model.piece(id), b = base.piece(id);
    if (a.size == b.size && std::memcmp(a.data, b.data, a.size) == 0) continue;
    return Status::error(StatusCode::kInvalidArgument,
                         "--against %s: token %d is %s there but %s in %s: KL needs the same tokenizer",
                         o.against.c_str(), id, shown(b).c_str(), shown(a).c_str(), o.model.c_str());
  }
  return Status();
}

// The text must be text: eval of a PNG scored it (14.47 bits/byte), and a model file given as
// the text ran for hours. A NUL byte, or more than 1 % of the bytes not well-formed UTF-8
// (Utf8Stream's U+FFFD replacements), is refused, naming what the file is where its first
// bytes say (a model file: the arguments swapped).
Status check_is_text(const std::string& label, const std::string& text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t nul = text.find('\0');
  char what[240];
  const std::size_t head = text.size() < kFileKindHeadBytes ? text.size() : kFileKindHeadBytes;
  if (!text.empty() && describe_foreign_file(bytes, head, text.size(), what, sizeof what) &&
      std::strncmp(what, "a text file", 11) != 0 && std::strncmp(what, "an HTML page", 12) != 0)
    return Status::error(StatusCode::kBadFormat, "%s: this is %s, not a text: eval takes MODEL TEXTFILE", label.c_str(),
                         what);
  if (nul != std::string::npos)
    return Status::error(StatusCode::kBadFormat,
                         "%s: not text: a NUL byte at offset %zu (eval takes MODEL TEXTFILE, UTF-8 text)", label.c_str(),
                         nul);
  // Replacements Utf8Stream makes, less the U+FFFD characters the text itself holds.
  std::size_t replaced = 0;
  Utf8Stream check(
      [](const char* t, std::size_t n, void* ctx) {  // whole characters: a U+FFFD never straddles calls
        for (std::size_t i = 0; i + 3 <= n; ++i)
          if (std::memcmp(t + i, "\xEF\xBF\xBD", 3) == 0) ++*static_cast<std::size_t*>(ctx);
      },
      &replaced);
  check.write(bytes, text.size());
  check.flush();
  std::size_t own = 0;
  for (std::size_t at = text.find("\xEF\xBF\xBD"); at != std::string::npos; at = text.find("\xEF\xBF\xBD", at + 3)) ++own;
  const std::size_t invalid = replaced > own ? replaced - own : 0;
  if (invalid * 100 > text.size())
    return Status::error(StatusCode::kBadFormat,
                         "%s: not UTF-8 text: %zu of its %zu bytes are not well-formed UTF-8 (eval takes MODEL "
                         "TEXTFILE, UTF-8 text)",
                         label.c_str(), invalid, text.size());
  return Status();
}

Status parse_count(const char* flag, const std::string& text, long long min, long long* out) {
  return parse_int(flag, text, min, INT32_MAX, out);
}

}  // namespace

int run_eval(const EvalOptions& o) {
  SessionOptions options;
  HostResources host;
  Status st = parse_session_flags(o, &options, &host);
  long long stride = 0, max_stories = 0;
  if (st.ok() && !o.stride.empty()) st = parse_count("--stride", o.stride, 1, &stride);
  if (st.ok() && !o.stories.empty()) st = parse_count("--stories", o.stories, 1, &max_stories);
  std::uint64_t seed = kDefaultSplitSeed;
  bool unused = false;
  if (st.ok() && !o.split_seed.empty()) st = parse_seed("--split-seed", o.split_seed, &seed, &unused);
  if (st.ok() && o.split != "heldout" && o.split != "all")
    st = Status::error(StatusCode::kInvalidArgument, "--split: '%s' is not heldout or all", o.split.c_str());
  if (!st.ok()) return fail(st);

  std::string text;
  st = read_text_input(o.text, "text", &text);
  if (st.ok()) st = check_is_text(o.text == "-" ? "stdin" : o.text, text);
  if (!st.ok()) return fail(st);

  Opened model, base;
  st = open_model(o.model, o.tokenizer, options, &model);
  if (st.ok() && !o.against.empty()) st = open_model(o.against, o.tokenizer, options, &base);
  if (!st.ok()) return fail(st);
  Session& m = model.session;
  const int vocab = m.spec().config.vocab_size;
  const bool against = !o.against.empty();
  if (against) {
    st = same_tokenizer(o, m.tokenizer(), base.session.tokenizer());
    if (!st.ok()) return fail(st);
  }
  const int window = against && base.session.seq_len() < m.seq_len() ? base.session.seq_len() : m.seq_len();
  // A stride past the window would skip tokens between windows: refused, not clamped.
  if (stride > window)
    return fail(Status::error(StatusCode::kInvalidArgument,
                              "--stride: %lld is more than the window of %d tokens (--seq-len or the model's seq_len)",
                              stride, window));
  const int step = stride > 0 ? static_cast<int>(stride) : (window > 1 ? window / 2 : 1);

  // The stories of the split, encoded.
  const std::vector<std::string_view> stories = split_stories(text);
  std::vector<std::vector<std::int32_t>> encoded;
  std::vector<std::int32_t> scratch;
  std::size_t chosen = 0;
  Totals t;
  for (std::size_t i = 0; i < stories.size(); ++i) {
    if (o.split == "heldout" && !is_heldout_story(i, seed)) continue;
    if (max_stories > 0 && chosen >= static_cast<std::size_t>(max_stories)) break;
    ++chosen;
    std::size_t entries = 0;
    st = Tokenizer::encode_capacity(stories[i].size(), &entries);
    if (!st.ok()) return fail(o.text + ": story " + std::to_string(i) + ": " + st.message());
    if (scratch.size() < entries) scratch.resize(entries);
    int n = 0;
    st = m.tokenizer().encode(stories[i].data(), stories[i].size(), true, false, scratch.data(), scratch.size(), &n);
    if (!st.ok()) return fail(o.text + ": story " + std::to_string(i) + ": " + st.message());
    t.bytes += stories[i].size();
    // Only the ids are kept: the buffer is mostly the merge's scratch.
    encoded.emplace_back(scratch.begin(), scratch.begin() + n);
  }
  std::uint64_t to_score = 0;
  for (const auto& s : encoded) to_score += s.size() > 1 ? s.size() - 1 : 0;
  if (to_score == 0) {
    // Say what to change: a short text of one's own holds few or no held-out stories.
    if (o.split == "heldout")
      return fail(o.text + ": the held-out split (about 1 story in 20, split seed " + std::to_string(seed) +
                  ") takes none of its " + counted(stories.size(), "story", "stories") +
                  "; --split all (the default) reads every story");
    return fail(o.text + ": holds no story to score (" + std::to_string(text.size()) +
                " bytes): stories are text between lines holding only " + kStorySeparator);
  }

  std::string error;
  {
    ProgressBar bar("eval", to_score);  // ended before any message is printed
    for (const auto& s : encoded) {
      const int len = static_cast<int>(s.size());
      int scored_upto = 1;  // tokens before this index are scored (index 0 is BOS, given)
      for (int start = 0; scored_upto < len && error.empty(); start += step) {
        ++t.windows;
        for (int p = 0; p < window && start + p + 1 < len; ++p) {
          const int target = start + p + 1;
          const float* logits = m.model().forward(s[static_cast<std::size_t>(start + p)], p);
          const float* base_logits = against ? base.session.model().forward(s[static_cast<std::size_t>(start + p)], p) : nullptr;
          if (target < scored_upto) continue;
          scored_upto = target + 1;
          const double nll = log_sum_exp(logits, vocab) - logits[s[static_cast<std::size_t>(target)]];
          if (!std::isfinite(nll)) {  // as generate(): overflowing weights give no number to average
            error = o.model + ": the logits at position " + std::to_string(p) +
                    " are not finite (NaN or inf): the weights overflow float arithmetic";
            break;
          }
          t.nll += nll;
          ++t.tokens;
          if (against) {
            t.kl += kl_divergence(base_logits, logits, vocab);
            t.agree += argmax(base_logits, vocab) == argmax(logits, vocab) ? 1 : 0;
          }
          bar.advance(1);
        }
      }
      if (!error.empty()) break;
    }
  }
  if (!error.empty()) return fail(error);

  const double ce = t.nll / static_cast<double>(t.tokens);
  const double bpb = t.nll / std::log(2.0) / static_cast<double>(t.bytes);
  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"format", format_name(m.spec().format)},
                        {"text", o.text},
                        {"split", o.split},
                        {"split_seed", o.split == "all" ? nlohmann::json(nullptr) : nlohmann::json(seed)},
                        {"stories", chosen},
                        {"stories_in_file", stories.size()},
                        {"bytes", t.bytes},
                        {"tokens", t.tokens},
                        {"windows", t.windows},
                        {"window", window},
                        {"stride", step},
                        {"cross_entropy", ce},
                        {"perplexity", std::exp(ce)},
                        {"bits_per_byte", bpb},
                        {"against", nullptr}};
    if (against)
      j["against"] = {{"model", o.against},
                      {"mean_kl", t.kl / static_cast<double>(t.tokens)},
                      {"top1_agreement", static_cast<double>(t.agree) / static_cast<double>(t.tokens)}};
    print_json(j);
    return kExitOk;
  }
  std::printf("model          %s (%s)\n", o.model.c_str(), format_name(m.spec().format));
  std::printf("text           %s: %s, %zu of %s, %s\n", o.text.c_str(),
              o.split == "all" ? "all stories" : ("held-out 5 %, split seed " + std::to_string(seed)).c_str(), chosen,
              counted(stories.size(), "story", "stories").c_str(), counted(t.bytes, "byte").c_str());
  std::printf("tokens         %llu scored, in %s of up to %s, stride %d\n", static_cast<unsigned long long>(t.tokens),
              counted(t.windows, "window").c_str(), counted(static_cast<std::uint64_t>(window), "token").c_str(), step);
  std::printf("cross-entropy  %.6f nats/token\n", ce);
  std::printf("perplexity     %.6f\n", std::exp(ce));
  std::printf("bits per byte  %.6f\n", bpb);
  if (against) {
    std::printf("against        %s\n", o.against.c_str());
    std::printf("mean KL        %.6f nats/token (KL(base || model))\n", t.kl / static_cast<double>(t.tokens));
    std::printf("top-1 agree    %.4f %%\n", 100.0 * static_cast<double>(t.agree) / static_cast<double>(t.tokens));
  }
  return kExitOk;
}

}  // namespace pocketlm::cli
