// `pocketlm bench`: end-to-end speed of one session, measured per forward pass. The session
// is opened once and generate() runs R times greedily, so every repeat does the same work;
// the token callback timestamps each pass into preallocated storage (nothing is allocated
// while generating, as in `run`).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bandwidth.h"
#include "cli_common.h"
#include "device_projection.h"
#include "json_output.h"
#include "commands.h"
#include "pocketlm/base/byte_size.h"
#include "pocketlm/model/blocks.h"
#include "ports/posix/file_storage.h"
#include "ports/posix/thread_pool.h"
#include "pocketlm/runtime/session.h"

namespace pocketlm::cli {

void add_bench_command(CLI::App& app, BenchOptions& o) {
  CLI::App* cmd = app.add_subcommand("bench", "measure prefill/decode speed, ms per token and weight bandwidth");
  add_model_argument(cmd, &o.model);
  cmd->add_option("-n", o.steps, "forward passes per repeat, prompt included; 0 = seq_len, as run (default 256, "
                  "clamped to seq_len)")->type_name("INT");
  cmd->add_option("--repeats", o.repeats, "number of generate() runs (default 5)")->type_name("INT");
  cmd->add_option("-i", o.prompt, "prompt (default \"Once upon a time\")")->type_name("TEXT");
  cmd->add_option("--prompt-tokens", o.prompt_tokens,
                  "prompt of exactly N tokens: BOS, then -i's tokens repeated (default 0: -i as it encodes)")
      ->type_name("INT");
  cmd->add_option("--prefill-batch", o.prefill_batch,
                  "prompt tokens per prefill pass (default 0: the plan's choice; 1: one at a time, as run.c)")
      ->type_name("INT");
  cmd->add_option("-t", o.temperature,
                  "temperature > 0: after each greedy repeat a sampled one (-t, -p, -s as run), both rates and "
                  "their ratio printed (default 0: greedy only)")
      ->type_name("FLOAT");
  cmd->add_option("-p", o.topp, "top-p of the sampled repeats, in [0,1] (default 0.9)")->type_name("FLOAT");
  add_json_flag(cmd, &o.json);
  cmd->add_option("-s", o.seed, "seed of the sampled repeats, > 0; every repeat starts from it (default 42)")
      ->type_name("INT");
  add_session_flags(cmd, kCmdBench, &o);
}

namespace {

using Clock = std::chrono::steady_clock;

// What the token callback records. The callback runs after each pass and its sampling, so
// the time between two callbacks is one pass (plus the negligible callback itself).
struct Timing {
  Clock::time_point start, last;
  int pass = 0;            // passes in the current repeat
  int forced = 0;          // passes whose next token comes from the prompt (n_prompt - 1)
  double prefill_s = 0.0;  // summed over all repeats
  int prefill_passes = 0;
  std::vector<double> decode_ms;       // every decode pass of every repeat (reserved)
  std::vector<double> first_token_ms;  // per repeat: start of generate() to first sampled token
};

bool on_token(std::int32_t /*prev*/, std::int32_t /*next*/, void* ctx) {
  auto* t = static_cast<Timing*>(ctx);
  const Clock::time_point now = Clock::now();
  const double dt = std::chrono::duration<double>(now - t->last).count();
  t->last = now;
  if (t->pass < t->forced) {
    t->prefill_s += dt;
    ++t->prefill_passes;
  } else {
    if (t->pass == t->forced)
      t->first_token_ms.push_back(std::chrono::duration<double, std::milli>(now - t->start).count());
    t->decode_ms.push_back(dt * 1e3);
  }
  ++t->pass;
  return true;
}

// The p-th percentile of sorted values: the nearest sample, no interpolation.
double percentile(const std::vector<double>& sorted, double p) {
  const std::size_t i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

// Tokens per second over passes of ms[i] milliseconds each (0 without any).
double tok_per_s(const std::vector<double>& ms) {
  double s = 0.0;
  for (double m : ms) s += m / 1e3;
  return s > 0 ? static_cast<double>(ms.size()) / s : 0.0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string bytes_text(std::uint64_t bytes) {
  char human[32];
  format_byte_size(bytes, human, sizeof human);
  return std::to_string(bytes) + " (" + human + ")";
}

}  // namespace

int run_bench(const BenchOptions& o) {
  SessionOptions options;
  HostResources host;
  Status st = parse_session_flags(o, &options, &host);
  long long steps = 0, repeats = 0, prompt_tokens = 0, prefill_batch = 0;
  if (st.ok()) st = parse_int("-n", o.steps, 0, INT32_MAX, &steps);
  if (st.ok()) st = parse_int("--repeats", o.repeats, 1, 100000, &repeats);
  if (st.ok()) st = parse_int("--prompt-tokens", o.prompt_tokens, 0, INT32_MAX, &prompt_tokens);
  if (st.ok()) st = parse_int("--prefill-batch", o.prefill_batch, 0, kMaxPrefillBatch, &prefill_batch);
  options.prefill_batch = static_cast<int>(prefill_batch);
  SamplerParams sampled;
  long long seed = 0;
  if (st.ok()) st = parse_float("-t", o.temperature, &sampled.temperature);
  if (st.ok() && !(sampled.temperature >= 0.0f && std::isfinite(sampled.temperature)))
    st = Status::error(StatusCode::kInvalidArgument, "-t: temperature %s is not a finite value >= 0", o.temperature.c_str());
  if (st.ok()) st = parse_float("-p", o.topp, &sampled.topp);
  if (st.ok() && !(sampled.topp >= 0.0f && sampled.topp <= 1.0f))
    st = Status::error(StatusCode::kInvalidArgument, "-p: top-p %s is not in [0, 1]", o.topp.c_str());
  if (st.ok()) st = parse_int("-s", o.seed, 1, INT64_MAX, &seed);
  sampled.seed = static_cast<std::uint64_t>(seed);
  const bool sampling = sampled.temperature > 0.0f;
  if (!st.ok()) return fail(st);

  ModelFiles files;
  Session session;
  st = files.open(o.model, o.tokenizer);
  if (st.ok()) st = open_session(files, options, &session);
  if (!st.ok()) return fail(st);

  // 0 means seq_len, as for run.
  const int n_steps = steps == 0 ? session.seq_len() : static_cast<int>(std::min<long long>(steps, session.seq_len()));
  std::size_t entries = 0;
  st = session.prompt_capacity(o.prompt.size(), &entries);
  if (!st.ok()) return fail(st);
  std::vector<std::int32_t> prompt(entries);
  int n_prompt = 0;
  st = session.encode(o.prompt.c_str(), o.prompt.size(), prompt.data(), prompt.size(), &n_prompt);
  if (!st.ok()) return fail(st);
  if (prompt_tokens > 0) {
    // A prompt of exactly N tokens: BOS, then the text's tokens over and over (no BOS inside,
    // which would end the run).
    if (prompt_tokens > session.seq_len())
      return fail(Status::error(StatusCode::kInvalidArgument, "--prompt-tokens: %lld is more than seq_len %d",
                                prompt_tokens, session.seq_len()));
    if (n_prompt < 2)
      return fail(Status::error(StatusCode::kInvalidArgument, "--prompt-tokens: -i encodes to no token after BOS"));
    const std::vector<std::int32_t> text(prompt.begin() + 1, prompt.begin() + n_prompt);
    prompt.resize(static_cast<std::size_t>(prompt_tokens));
    for (std::size_t i = 1; i < prompt.size(); ++i) prompt[i] = text[(i - 1) % text.size()];
    n_prompt = static_cast<int>(prompt_tokens);
  }
  if (!files.tokenizer_warning.empty()) warn(files.tokenizer_warning);

  Timing t, ts;  // greedy repeats, sampled repeats
  for (Timing* timing : {&t, &ts}) {
    timing->forced = n_prompt - 1;
    timing->decode_ms.reserve(static_cast<std::size_t>(n_steps) * static_cast<std::size_t>(repeats));
    timing->first_token_ms.reserve(static_cast<std::size_t>(repeats));
  }
  std::uint64_t storage_bytes = 0, storage_reads = 0, storage_seeks = 0, passes = 0, prefill_bytes = 0,
                prefill_seeks = 0, greedy_decode_passes = 0, decode_kv_positions = 0;
  SamplerParams greedy;
  greedy.temperature = 0.0f;
  // The machine's own limits, measured now with the same number of threads: a sweep of read
  // rates over buffer sizes gives the last-level cache's rate and DRAM's, and decode is compared
  // with the tier its weights live in (a model larger than the cache's knee streams from DRAM).
  // First, so that weights read from DRAM can be compared with it run by run: a probe of the
  // sweep's DRAM size is read right before the first greedy repeat and right after each.
  const std::uint64_t bytes_per_token = session.model().weight_bytes_per_token();
  const BandwidthSweep sweep = sweep_read_bandwidth(session.threads());
  const ReadLimit limit = read_limit_for(sweep, static_cast<double>(bytes_per_token));
  const bool in_llc = std::strcmp(limit.tier, "llc") == 0;
  std::unique_ptr<ReadProbe> probe;
  if (!in_llc) probe = std::make_unique<ReadProbe>(session.threads(), sweep.dram_mib);
  if (probe && !probe->ok()) probe.reset();
  std::vector<double> probes, run_seconds;
  std::vector<int> run_passes;
  if (probe) probes.push_back(probe->gb_per_s());
  for (long long r = 0; r < repeats; ++r) {
    t.pass = 0;
    t.start = t.last = Clock::now();
    GenerateStats stats;
    const std::size_t first_pass = t.decode_ms.size();
    st = session.generate(prompt.data(), n_prompt, n_steps, greedy, on_token, &t, &stats);
    if (probe) {
      probes.push_back(probe->gb_per_s());
      run_passes.push_back(static_cast<int>(t.decode_ms.size() - first_pass));
      double ms = 0.0;
      for (std::size_t i = first_pass; i < t.decode_ms.size(); ++i) ms += t.decode_ms[i];
      run_seconds.push_back(ms / 1e3);
    }
    storage_bytes += stats.storage_bytes;
    storage_reads += stats.storage_reads;
    storage_seeks += stats.storage_seeks;
    prefill_bytes += stats.prefill_storage_bytes;
    prefill_seeks += stats.prefill_storage_seeks;
    passes += static_cast<std::uint64_t>(stats.prefill_passes + stats.decode_passes);
    greedy_decode_passes += static_cast<std::uint64_t>(stats.decode_passes);
    decode_kv_positions += stats.decode_kv_positions;
    if (!st.ok()) return fail(st);
    if (!sampling) continue;
    // The same repeat sampled, right after: drift of the machine hits both alike.
    ts.pass = 0;
    ts.start = ts.last = Clock::now();
    st = session.generate(prompt.data(), n_prompt, n_steps, sampled, on_token, &ts, &stats);
    if (!st.ok()) return fail(st);
  }

  const double decode_tps = tok_per_s(t.decode_ms);
  const double prefill_tps = t.prefill_s > 0 ? t.prefill_passes / t.prefill_s : 0.0;
  // A greedy decode pass at position p reads p + 1 positions of the kv cache (the plan's kv cache
  // region holds seq_len of them): on a long context as much memory traffic as a share of the
  // weights. The mean is counted, so a run that ends early at BOS is measured as it ran.
  const double mean_kv_positions =
      greedy_decode_passes ? static_cast<double>(decode_kv_positions) / static_cast<double>(greedy_decode_passes) : 0.0;
  const double kv_bytes_per_token = static_cast<double>(session.plan().bytes_of(region::kKvCache)) /
                                    static_cast<double>(session.seq_len()) * mean_kv_positions;

  // The table's rows go to stdout unless --json asked for the JSON object instead.
  auto row = [&o](const char* key, const std::string& value) {
    if (!o.json) std::printf("%-22s | %s\n", key, value.c_str());
  };
  nlohmann::json j = {{"model", o.model},
                      {"format", format_name(session.spec().format)},
                      {"kernels", session.kernels().name},
                      {"threads", session.threads()},
                      {"seq_len", session.seq_len()},
                      {"steps", n_steps},
                      {"prompt_tokens", n_prompt},
                      {"repeats", repeats},
                      {"prefill_batch", session.prefill_batch()}};
  if (!o.json) {
    std::printf("%-22s | %s\n", "metric", "value");
    std::printf("-----------------------+------------------------------------------------\n");
  }
  row("model", o.model);
  row("format", format_name(session.spec().format));
  row("kernels", session.kernels().name);
  row("threads", std::to_string(session.threads()));
  row("seq_len / steps", std::to_string(session.seq_len()) + " / " + std::to_string(n_steps) + ", prompt " +
                             counted(n_prompt, "token") + ", " + counted(repeats, "repeat") + ", greedy" +
                             (sampling ? fmt(", each followed by one sampled (-t %g -p %g -s %.0f)", sampled.temperature,
                                             sampled.topp, static_cast<double>(seed))
                                       : std::string()));
  row("prefill tok/s", t.prefill_passes ? fmt("%.1f (", prefill_tps) + counted(t.prefill_passes, "pass", "passes") +
                                             ", up to " + counted(session.prefill_batch(), "token") + " per weight read)"
                                       : "n/a (no prefill pass)");
  j["prefill_tok_per_s"] = t.prefill_passes ? nlohmann::json(prefill_tps) : nlohmann::json(nullptr);
  std::vector<double> sorted = t.decode_ms;  // decode ms per pass, ascending
  std::sort(sorted.begin(), sorted.end());
  j["decode_tok_per_s"] = nullptr;
  if (!sorted.empty()) {
    j["decode_tok_per_s"] = decode_tps;
    j["decode_tok_per_s_at_median"] = 1e3 / percentile(sorted, 50);
    j["decode_ms"] = {{"median", percentile(sorted, 50)}, {"p10", percentile(sorted, 10)},
                      {"p90", percentile(sorted, 90)},    {"min", sorted.front()},
                      {"max", sorted.back()}};
    j["first_token_ms_median"] = median(t.first_token_ms);
  }
  if (t.decode_ms.empty()) {
    row("decode tok/s", "n/a (no decode pass: the prompt fills -n)");
  } else {
    // The median-based rate too: on a shared machine one preempted pass skews the mean.
    row("decode tok/s", fmt("%.1f (", decode_tps) + counted(sorted.size(), "pass", "passes") +
                            fmt("; %.1f at the median ms/token)", 1e3 / percentile(sorted, 50)));
    row("decode ms/token", fmt("median %.3f, p10-p90 %.3f-%.3f, min-max %.3f-%.3f", percentile(sorted, 50),
                               percentile(sorted, 10), percentile(sorted, 90), sorted.front(), sorted.back()));
    row("first-token ms", fmt("median %.3f over repeats (first %.3f)", median(t.first_token_ms), t.first_token_ms[0]));
  }
  if (sampling && !t.decode_ms.empty() && !ts.decode_ms.empty()) {
    // The sampler's cost as a ratio of two rates measured in the same process, interleaved.
    // Both medians the same way: the nearest sample, as the greedy rows above.
    std::vector<double> sampled_sorted = ts.decode_ms;
    std::sort(sampled_sorted.begin(), sampled_sorted.end());
    const double sampled_tps = tok_per_s(ts.decode_ms);
    const double sampled_median = 1e3 / percentile(sampled_sorted, 50), greedy_median = 1e3 / percentile(sorted, 50);
    j["sampled"] = {{"temperature", sampled.temperature}, {"topp", sampled.topp}, {"seed", seed},
                    {"decode_tok_per_s", sampled_tps}, {"ratio_to_greedy", sampled_tps / decode_tps},
                    {"ratio_to_greedy_at_median", sampled_median / greedy_median}};
    row("sampled decode tok/s", fmt("%.1f (", sampled_tps) + counted(ts.decode_ms.size(), "pass", "passes") +
                                    fmt("; %.1f at the median ms/token)", sampled_median));
    row("sampled / greedy", fmt("%.3f (decode tok/s; %.3f at the median ms/token)", sampled_tps / decode_tps,
                                sampled_median / greedy_median));
  }
  j["weight_bytes_per_token"] = bytes_per_token;
  j["effective_gb_per_s"] =
      t.decode_ms.empty() ? nlohmann::json(nullptr) : nlohmann::json(double(bytes_per_token) * decode_tps / 1e9);
  row("weight bytes/token", bytes_text(bytes_per_token));
  row("effective GB/s", t.decode_ms.empty() ? "n/a"
                                            : fmt("%.2f (weight bytes/token x decode tok/s)",
                                                  static_cast<double>(bytes_per_token) * decode_tps / 1e9));
  std::string sweep_text;
  nlohmann::json sweep_json = nlohmann::json::array();
  for (const SweepPoint& p : sweep.points) {
    sweep_text += (sweep_text.empty() ? "" : ", ") + fmt("%.0f MiB %.1f", p.mib, p.gb_per_s);
    sweep_json.push_back({{"mib", p.mib}, {"gb_per_s", p.gb_per_s}});
  }
  row("read sweep GB/s", sweep_text + fmt(" (%.0f thread(s), ", sweep.threads) + sweep.loop +
                             fmt(" loads, median of 7 passes, %.2f s)", sweep.seconds));
  row("llc read", fmt("%.2f GB/s at %.0f MiB, the cache's knee (the largest size at least halfway from DRAM's rate "
                      "to the cache plateau)", sweep.llc_gb_per_s, sweep.knee_mib));
  row("dram read", fmt("%.2f GB/s at %.0f MiB", sweep.dram_gb_per_s, sweep.dram_mib));
  row("read bandwidth", fmt("%.2f GB/s (", limit.gb_per_s) + limit.tier +
                            fmt(in_llc ? ": weights below the %.0f MiB knee)" : ": weights at or above the %.0f MiB knee)",
                                sweep.knee_mib));
  j["read_bandwidth"] = {{"gb_per_s", limit.gb_per_s},     {"tier", limit.tier},
                         {"threads", sweep.threads},       {"loop", sweep.loop},
                         {"llc_gb_per_s", sweep.llc_gb_per_s}, {"llc_knee_mib", sweep.knee_mib},
                         {"dram_gb_per_s", sweep.dram_gb_per_s}, {"dram_mib", sweep.dram_mib},
                         {"seconds", sweep.seconds},      {"sweep", sweep_json}};
  if (probe) j["read_bandwidth"]["dram_probes_gb_per_s"] = probes;
  j["kv_cache_bytes_per_token"] = kv_bytes_per_token;
  row("kv cache bytes/token", fmt("%.0f (read by attention, mean over the greedy decode passes)", kv_bytes_per_token));
  if (!t.decode_ms.empty()) {
    j["fraction_of_limit"] = double(bytes_per_token) / 1e9 / limit.gb_per_s * decode_tps;
    const double per_limit = static_cast<double>(bytes_per_token) / 1e9 / limit.gb_per_s;
    row("fraction of limit", fmt("%.2f (effective GB/s / ", per_limit * decode_tps) + limit.tier +
                                 fmt(" read bandwidth; %.2f at the median ms/token)", per_limit * 1e3 / percentile(sorted, 50)));
    // Every byte decode reads: the weights and the kv cache positions attention went over.
    const double all_per_limit = (static_cast<double>(bytes_per_token) + kv_bytes_per_token) / 1e9 / limit.gb_per_s;
    j["fraction_of_limit_with_kv"] = all_per_limit * decode_tps;
    row("with kv cache reads", fmt("%.2f ((weight + kv cache bytes/token) x decode tok/s / ", all_per_limit * decode_tps) +
                                   limit.tier + fmt(" read bandwidth; %.2f at the median ms/token)",
                                                    all_per_limit * 1e3 / percentile(sorted, 50)));
    if (probe) {
      // The same against the DRAM rate of each repeat's own minute.
      const double paired = paired_fraction(static_cast<double>(bytes_per_token), run_passes, run_seconds, probes);
      const auto [lo, hi] = std::minmax_element(probes.begin(), probes.end());
      j["fraction_of_dram_paired"] = paired;
      row("paired with dram", fmt("%.2f (median over repeats of effective GB/s / the dram read just before and after; ",
                                  paired) +
                                  fmt("%.0f probes of %.0f MiB, %.2f-%.2f GB/s)", static_cast<double>(probes.size()), sweep.dram_mib, *lo, *hi));
    }
  }
  row("arena bytes", bytes_text(session.arena_bytes()));
  j["arena_bytes"] = session.arena_bytes();
  const double bytes_per_pass = passes ? static_cast<double>(storage_bytes) / static_cast<double>(passes) : 0.0;
  const double reads_per_pass = passes ? static_cast<double>(storage_reads) / static_cast<double>(passes) : 0.0;
  const double seeks_per_pass = passes ? static_cast<double>(storage_seeks) / static_cast<double>(passes) : 0.0;
  j["storage"] = {{"bytes_per_token", bytes_per_pass}, {"reads_per_token", reads_per_pass},
                  {"seeks_per_token", seeks_per_pass}};
  row("storage bytes/token", storage_bytes ? fmt("%.0f in %.0f reads, %.0f seeks (weights kept in storage, counted)",
                                                 bytes_per_pass, reads_per_pass, seeks_per_pass)
                                           : "0 (every weight resident)");
  if (storage_bytes && t.prefill_passes) {
    const double decode_bytes = static_cast<double>(storage_bytes - prefill_bytes);
    const double decode_passes = static_cast<double>(passes) - t.prefill_passes;
    row("storage by phase", fmt("prefill %.0f per prompt token, decode %.0f per token", prefill_bytes / t.prefill_passes,
                                   decode_passes > 0 ? decode_bytes / decode_passes : 0.0));
  }
  if (options.device) {
    // Decode passes of the greedy repeats (whose reads were counted): a prefill pass reads the
    // weights once for a block of tokens.
    const double decode_passes = static_cast<double>(t.decode_ms.size());
    const double decode_bytes = static_cast<double>(storage_bytes - prefill_bytes);
    const double decode_seeks = static_cast<double>(storage_seeks - prefill_seeks);
    const double mean_position =
        greedy_decode_passes ? mean_kv_positions - 1 : (n_prompt - 1 + n_steps - 1) / 2.0;
    const DeviceProjection p = project_decode(*options.device, session.plan(), session.spec(), session.seq_len(),
                                              decode_passes > 0 ? decode_bytes / decode_passes : 0.0,
                                              decode_passes > 0 ? decode_seeks / decode_passes : 0.0, mean_position);
    row("projected decode tok/s", projection_text(*options.device, p));
    nlohmann::json tiers = nlohmann::json::array();
    for (int i = 0; i < p.tier_count; ++i)
      tiers.push_back({{"name", p.tiers[i].tier}, {"bytes_per_token", p.tiers[i].bytes},
                       {"bytes_per_s", p.tiers[i].bytes_per_s}, {"seconds", p.tiers[i].seconds}});
    j["projection"] = {{"device", options.device->name},
                       {"estimate", true},
                       {"decode_tok_per_s", p.known ? nlohmann::json(p.tok_per_s) : nlohmann::json(nullptr)},
                       {"macs_per_token", p.macs},
                       {"compute_s", p.compute_s},
                       {"storage_seeks_per_token", p.storage_seeks},
                       {"reads_overlap_compute", p.overlap},
                       {"tiers", tiers}};
  }
  if (o.json) print_json(j);
  return kExitOk;
}

}  // namespace pocketlm::cli
