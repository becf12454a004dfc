#include "cli_trace.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <thread>

#include "numerics/attention.hpp"
#include "io/session_io.hpp"
#include "cli_common.hpp"

namespace al::cli {
namespace {

constexpr const char* kUsage =
    "usage: attention-lab trace <preset | session.json> (--json | --summary) [--keep STAGES]\n"
    "  --json     print every stage as nested arrays (one JSON object)\n"
    "  --summary  print each stage's shape and value range, the memory and compute_ms\n"
    "  --keep     keep only these (B, h, Lq, Lk) stages, comma-separated (scores, scaled, biased,\n"
    "             masked, weights, dropped): the others are computed and dropped, for a session\n"
    "             too large to keep whole\n";

void print_json(const Trace& trace) {
  const Dims& d = trace.dims;
  auto number = [](double v) {
    if (std::isnan(v)) return std::string("\"NaN\"");
    if (std::isinf(v)) return std::string(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  write("{\"dims\": {\"batch\": " + std::to_string(d.batch) + ", \"heads\": " + std::to_string(d.heads) +
        ", \"len_q\": " + std::to_string(d.len_q) + ", \"len_kv\": " + std::to_string(d.len_kv) +
        ", \"d_model\": " + std::to_string(d.d_model) + ", \"d_k\": " + std::to_string(d.d_k) + "},\n");
  write(" \"scale\": " + number(trace.scale) + ",\n \"mask_fill\": " + number(trace.mask_fill) +
        ",\n \"stages\": {");
  const char* separator = "\n  ";
  for (Stage s : kAllStages) {
    if (!trace.has(s)) continue;  // x_pos, q_rot, ... only with their option
    write(separator + std::string("\"") + stage_name(s) + "\": " + tensor_to_json(trace.stage(s)));
    separator = ",\n  ";
  }
  write("\n },\n \"mask\": " + (trace.mask ? tensor_to_json(*trace.mask) : std::string("null")));
  write(",\n \"row_max\": " + (trace.row_max ? tensor_to_json(*trace.row_max) : std::string("null")));
  write(",\n \"row_sum\": " + (trace.row_sum ? tensor_to_json(*trace.row_sum) : std::string("null")));
  // (B, Lq) of 0/1: rows whose every key is masked.
  Tensor fully_masked({d.batch, d.len_q});
  for (size_t i = 0; i < trace.fully_masked_rows.size() && i < fully_masked.data.size(); ++i)
    fully_masked.data[i] = trace.fully_masked_rows[i] ? 1.0f : 0.0f;
  write(",\n \"fully_masked_rows\": " + tensor_to_json(fully_masked));
  write(",\n \"checks\": {\"masked_weight_max\": " + number(trace.checks.masked_weight_max) +
        ", \"row_sum_error_max\": " + number(trace.checks.row_sum_error_max) + "}\n}\n");
}

std::string human_bytes(Index bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) v /= 1024.0, ++u;
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s (%lld bytes)", v, units[u], static_cast<long long>(bytes));
  return buf;
}

// A stage's range without NaN (counted apart); infinities count as values. The (B, h, L, L)
// stages are most of the command's time otherwise, so the range is found in one vectorised pass
// on both cores (a NaN fails both comparisons and is left out), and NaN and infinities are
// counted in a second pass only where the first saw one: the masked stage's -inf, rarely more.
struct StageRange {
  float lo = 0, hi = 0;
  Index nans = 0, infs = 0;
};

StageRange range_of(const Tensor& t) {
  constexpr float inf = std::numeric_limits<float>::infinity(), largest = std::numeric_limits<float>::max();
  constexpr Index kParallelAbove = Index{1} << 18;
  const float* v = t.data.data();
  const Index n = t.size();
  float lo = inf, hi = -inf;
  int non_finite = 0;
#pragma omp parallel for simd reduction(min : lo) reduction(max : hi) reduction(| : non_finite) if (n > kParallelAbove)
  for (Index i = 0; i < n; ++i) {
    const float x = v[i];
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    non_finite |= !(std::fabs(x) <= largest);
  }
  Index nans = 0, infs = 0;
  if (non_finite) {
#pragma omp parallel for reduction(+ : nans, infs) if (n > kParallelAbove)
    for (Index i = 0; i < n; ++i) {
      nans += std::isnan(v[i]);
      infs += std::isinf(v[i]);
    }
  }
  return {lo, hi, nans, infs};
}

void print_summary(const std::string& source, const Session& session, const Trace& trace, double compute_ms) {
  const Dims& d = trace.dims;
  const Config& c = session.config;
  std::printf("session: %s (%s, %s attention)\n", source.c_str(),
              c.mode == InputMode::Direct ? "direct" : "projection",
              c.attention == AttentionKind::Cross ? "cross" : "self");
  std::printf("dims: B=%lld heads=%lld Lq=%lld Lk=%lld d_model=%lld d_k=%lld\n", (long long)d.batch,
              (long long)d.heads, (long long)d.len_q, (long long)d.len_kv, (long long)d.d_model,
              (long long)d.d_k);
  std::printf("scale: %.9g\nmask_fill: %.9g\n", trace.scale, trace.mask_fill);
  std::printf("%-8s %-14s %14s %14s  %s\n", "stage", "shape", "min", "max", "non-finite");
  const Tensor* last = nullptr;  // a stage equal to the one before it (masked = scaled, …) is the same tensor
  StageRange r;
  for (Stage s : kAllStages) {
    if (!trace.has(s)) continue;
    const Tensor& t = trace.stage(s);
    if (&t != last) r = range_of(t);
    last = &t;
    const auto [lo, hi, nans, infs] = r;
    std::string extra;
    if (nans) extra += std::to_string(nans) + " NaN";
    if (infs) extra += std::string(extra.empty() ? "" : ", ") + std::to_string(infs) + " inf";
    if (nans == t.size()) std::printf("%-8s %-14s %14s %14s  %s\n", stage_name(s), shape_string(t.shape).c_str(),
                                      "-", "-", extra.c_str());
    else std::printf("%-8s %-14s %14.6g %14.6g  %s\n", stage_name(s), shape_string(t.shape).c_str(), lo, hi,
                     extra.c_str());
  }
  Index fully_masked = 0;
  for (unsigned char f : trace.fully_masked_rows) fully_masked += f ? 1 : 0;
  std::printf("mask: %s\n", trace.mask ? shape_string(trace.mask->shape).c_str() : "none");
  std::printf("fully_masked_rows: %lld\n", static_cast<long long>(fully_masked));
  std::printf("masked_weight_max: %.9g\nrow_sum_error_max: %.9g\n", trace.checks.masked_weight_max,
              trace.checks.row_sum_error_max);
  std::printf("memory: %s\n", human_bytes(trace.memory_bytes).c_str());
  std::printf("compute_ms: %.3f\n", compute_ms);
}

}  // namespace

int run_trace(int argc, char** argv) {
  std::string source;
  bool json = false, summary = false;
  ComputeOptions options;
  OptionValues values(argc, argv);
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") json = true;
    else if (arg == "--summary") summary = true;
    else if (arg == "--keep") {
      std::string list;
      if (auto problem = values.take(i, arg, "a list of stages, e.g. --keep weights", list))
        return usage_error("trace: " + *problem, kUsage);
      options.keep = square_stages_from_names(list);
      if (!options.keep)
        return usage_error("trace: --keep takes scores, scaled, biased, masked, weights or dropped, "
                           "comma-separated; not '" + list + "'", kUsage);
    }
    else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (!arg.empty() && arg[0] == '-') return usage_error("trace: unknown option " + arg, kUsage);
    else if (source.empty()) source = arg;
    else return usage_error("trace: more than one session given (" + source + ", " + arg + ")", kUsage);
  }
  if (source.empty()) return usage_error("trace: which session? Give a preset name or a session.json file.", kUsage);
  if (json == summary) return usage_error("trace: choose one of --json or --summary.", kUsage);

  // The session loads on another thread while this one, which computes, warms up (libgomp
  // keeps a thread team per calling thread, so the warm-up must run here).
  Result<Session> session = make_error(ErrorCode::IoError, "not loaded");
  std::atomic<bool> loading{true};
  std::thread load([&] {
    session = load_session_or_preset(source);
    loading = false;
  });
  warm_up([&] { return loading.load(); });
  load.join();
  if (!session) return fail(session.error().message);

  const auto start = std::chrono::steady_clock::now();
  auto trace = compute(*session, options);
  const double compute_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!trace) return fail(trace.error().message);

  if (json) print_json(**trace);
  else print_summary(source, *session, **trace, compute_ms);
  std::fflush(stdout);
  if (std::ferror(stdout)) return fail("could not write the output (" + source + ")");
  return 0;
}

}  // namespace al::cli
