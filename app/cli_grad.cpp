#include "cli_grad.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "numerics/attention.hpp"
#include "numerics/backward.hpp"
#include "io/matrix_io.hpp"
#include "io/session_io.hpp"
#include "cli_common.hpp"

namespace al::cli {
namespace {

constexpr const char* kUsage =
    "usage: attention-lab grad <preset | session.json> [--upstream G.npy] --json\n"
    "  prints {\"loss\": L, \"inputs\": {...}, \"stages\": {...}}: the gradient of\n"
    "  L = sum(output * G) for every input and weight (by the session's own names,\n"
    "  weights in math layout, in x out) and every stage (the trace's names and shapes).\n"
    "  --upstream G.npy  G, shaped like the output (B x Lq x d_model); default all ones\n";

std::string number(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void print_json(const Gradients& g) {
  write("{\"loss\": " + number(g.loss) + ",\n \"inputs\": {");
  for (size_t i = 0; i < g.inputs.size(); ++i)
    write(std::string(i ? ",\n  " : "\n  ") + "\"" + g.inputs[i].name + "\": " + tensor_to_json(*g.inputs[i].gradient));
  write("\n },\n \"stages\": {");
  const char* separator = "\n  ";
  for (Stage s : kAllStages) {
    if (!g.stages[static_cast<int>(s)]) continue;  // a stage this session's trace does not have
    write(separator + std::string("\"") + stage_name(s) + "\": " + tensor_to_json(g.stage(s)));
    separator = ",\n  ";
  }
  write("\n }\n}\n");
}

}  // namespace

int run_grad(int argc, char** argv) {
  std::string source, upstream_path;
  if (const auto stop = parse_session_command(argc, argv, "grad", kUsage, source,
                                              {{"--upstream", "a .npy file", &upstream_path}}))
    return *stop;

  Result<Session> session = load_session_or_preset(source);
  if (!session) return fail(session.error().message);
  auto trace = compute(*session);
  if (!trace) return fail(trace.error().message);
  const Dims& d = (*trace)->dims;
  Tensor upstream({d.batch, d.len_q, d.d_model}, 1.0f);
  if (!upstream_path.empty()) {
    Result<Tensor> read = read_npy(upstream_path);
    if (!read) return fail(read.error().message);
    upstream = std::move(*read);
  }
  auto gradients = backward(*session, **trace, upstream);
  if (!gradients) return fail(gradients.error().message);
  print_json(*gradients);
  std::fflush(stdout);
  if (std::ferror(stdout)) return fail("could not write the output (" + source + ")");
  return 0;
}

}  // namespace al::cli
