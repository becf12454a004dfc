#include "cli_decode.hpp"

#include <cstdio>
#include <string>

#include "numerics/decode.hpp"
#include "io/session_io.hpp"
#include "cli_common.hpp"

namespace al::cli {
namespace {

constexpr const char* kUsage =
    "usage: attention-lab decode <preset | session.json> --json\n"
    "  runs a causal self-attention session token by token with a KV cache and prints\n"
    "  {\"cache_bytes_per_token\", \"multi_head_bytes_per_token\", \"steps\": [{\"t\", \"positions\",\n"
    "  \"q\" (B,h,1,d_k), \"k_cache\" (B,h_kv,n,d_k), \"v_cache\", \"weights\" (B,h,1,n),\n"
    "  [\"dropped\" (B,h,1,n): with dropout in training, the weights the output sums],\n"
    "  \"output\" (B,1,d_model), [\"fully_masked_rows\" (B,1) of 0/1: when padding hides every cached key\n"
    "  from the new token; its weights are NaN with -inf, else uniform over the cache (the full pass\n"
    "  spreads them over all L keys)]}, ...]}; with a sliding window the cache keeps the last w positions.\n";

void print_json(const DecodeRun& run) {
  std::string out = "{\n \"cache_bytes_per_token\": " + std::to_string(run.cache_bytes_per_token) +
                    ",\n \"multi_head_bytes_per_token\": " + std::to_string(run.multi_head_bytes_per_token) +
                    ",\n \"steps\": [";
  for (size_t s = 0; s < run.steps.size(); ++s) {
    const DecodeStep& step = run.steps[s];
    out += std::string(s ? ",\n  " : "\n  ") + "{\"t\": " + std::to_string(step.t) + ", \"positions\": [";
    for (size_t i = 0; i < step.positions.size(); ++i) out += (i ? ", " : "") + std::to_string(step.positions[i]);
    out += "],\n   \"q\": " + tensor_to_json(step.q) + ",\n   \"k_cache\": " + tensor_to_json(step.k_cache) +
           ",\n   \"v_cache\": " + tensor_to_json(step.v_cache) + ",\n   \"weights\": " + tensor_to_json(step.weights);
    if (!step.dropped.data.empty()) out += ",\n   \"dropped\": " + tensor_to_json(step.dropped);
    out += ",\n   \"output\": " + tensor_to_json(step.output);
    if (step.any_fully_masked()) {
      Tensor rows({static_cast<Index>(step.fully_masked.size()), 1});  // (B, 1) as the trace's (B, Lq)
      for (size_t b = 0; b < step.fully_masked.size(); ++b) rows.data[b] = step.fully_masked[b];
      out += ",\n   \"fully_masked_rows\": " + tensor_to_json(rows);
    }
    out += "}";
    write(out);  // step by step: a long session is not held as one string
    out.clear();
  }
  out += "\n ]\n}\n";
  write(out);
}

}  // namespace

int run_decode(int argc, char** argv) {
  std::string source;
  if (const auto stop = parse_session_command(argc, argv, "decode", kUsage, source)) return *stop;
  Result<Session> session = load_session_or_preset(source);
  if (!session) return fail(session.error().message);
  auto run = decode(*session);
  if (!run) return fail(run.error().message);
  print_json(*run);
  std::fflush(stdout);
  if (std::ferror(stdout)) return fail("could not write the output (" + source + ")");
  return 0;
}

}  // namespace al::cli
