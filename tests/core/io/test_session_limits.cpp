// Sizes a session file asks for are refused before they are allocated: the
// {"random"} matrices together, and the trace of an L = 10^6 session.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <chrono>
#include <string>

#include "numerics/attention.hpp"
#include "io/session_io.hpp"
#include "editing/session_model.hpp"

using namespace al;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Peak resident memory of this process so far, in bytes (Linux reports KiB).
long long peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<long long>(usage.ru_maxrss) * 1024;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("limits: the random matrices of a session are capped together, before any is generated") {
  // Each of q, k, v is 2^27 numbers, under the 2^28 cap of one matrix;
  // together 3 * 2^27 numbers = 1.5 GiB of float32, over the 2^28 of a session.
  const std::string shape = "[1, 1048576, 128]";
  const std::string text = R"({"format": "attention-lab/session", "version": 1, "config": {"mode": "direct"},
    "q": {"random": {"shape": )" + shape + R"(}}, "k": {"random": {"shape": )" + shape +
                           R"(, "seed": 1}}, "v": {"random": {"shape": )" + shape + R"(, "seed": 2}}})";
  const long long peak_before = peak_rss_bytes();
  const auto start = std::chrono::steady_clock::now();
  auto r = parse_session_json(text, "", "big.json");
  const double elapsed = seconds_since(start);
  REQUIRE_FALSE(r.ok());
  const Error& e = r.error();
  CHECK(e.code == ErrorCode::TooLarge);
  const long long bytes = 3LL * 134217728 * 4;  // 1610612736
  CHECK(contains(e.message, "big.json: "));
  CHECK(contains(e.message, "402653184 numbers together"));  // 3 * 2^27
  for (const char* part : {"q.random 134217728", "k.random 134217728", "v.random 134217728"})
    CHECK(contains(e.message, part));
  CHECK(contains(e.message, "1.5 GiB (" + std::to_string(bytes) + " bytes)"));
  CHECK(contains(e.message, "at most 268435456 numbers (1.0 GiB (1073741824 bytes))"));
  // Generating even one of them takes seconds and 512 MiB.
  CHECK(elapsed < 0.5);
  CHECK(peak_rss_bytes() - peak_before < (64LL << 20));

  SUBCASE("the same with the masks and weights counted too") {
    // x (1, 2^20, 128), w_q (128, 128) and a custom mask (1, 2^20, 128): 2^28 + 2^14 numbers.
    const std::string over = R"({"format": "attention-lab/session", "version": 1,
      "config": {"mask": {"custom": {"random": {"shape": [1, 1048576, 128], "std": 0}}}},
      "x": {"random": {"shape": [1, 1048576, 128]}},
      "weights": {"w_q": {"random": {"shape": [128, 128]}}}})";
    auto refused = parse_session_json(over, "", "over.json");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == ErrorCode::TooLarge);
    CHECK(contains(refused.error().message, "268451840 numbers together"));  // 2^28 + 2^14
    CHECK(contains(refused.error().message, "config.mask.custom.random 134217728"));
    CHECK(contains(refused.error().message, "weights.w_q.random 16384"));
    CHECK(contains(refused.error().message, "(1073807360 bytes)"));
  }
}

TEST_CASE("limits: an L = 10^6 session of random inputs is refused with its trace's size before they are generated") {
  // x would be (1, 10^6, 64): 256 MB and seconds to generate, for a trace of terabytes.
  const std::string text = R"({"format": "attention-lab/session", "version": 1,
    "config": {"d_model": 64, "num_heads": 2},
    "x": {"random": {"shape": [1, 1000000, 64]}},
    "weights": {"w_q": {"random": {"shape": [64, 64]}}, "w_k": {"random": {"shape": [64, 64]}},
                "w_v": {"random": {"shape": [64, 64]}}, "w_o": {"random": {"shape": [64, 64]}}}})";
  const long long peak_before = peak_rss_bytes();
  const auto start = std::chrono::steady_clock::now();
  auto loaded = parse_session_json(text, "", "long.json");
  const double elapsed = seconds_since(start);
  REQUIRE_FALSE(loaded.ok());
  const Error& e = loaded.error();
  CHECK(e.code == ErrorCode::TooLarge);
  // Scores and weights: 2 * 4 bytes * (1 x 2 x 10^6 x 10^6) = 1.6e13 bytes = 14.6 TiB.
  CHECK(contains(e.message, "would need at least 14.6 TiB (16000000000000 bytes)"));
  CHECK(contains(e.message, "1 x 2 x 1000000 x 1000000"));
  CHECK(contains(e.message, "more than the memory limit of"));
  CHECK(contains(e.message, "not generated"));
  CHECK(elapsed < 0.5);
  CHECK(peak_rss_bytes() - peak_before < (64LL << 20));

  SUBCASE("the app's loader refuses it the same way") {
    auto editing = parse_session_json_for_editing(text, "", "long.json");
    REQUIRE_FALSE(editing.ok());
    CHECK(editing.error().message == e.message);
  }
  SUBCASE("cross attention: Lq from x_q, Lk from x_kv; direct: from q and k") {
    auto cross = parse_session_json(R"({"format": "attention-lab/session", "version": 1,
      "config": {"attention": "cross"}, "x_q": {"random": {"shape": [3, 1000, 4]}},
      "x_kv": {"random": {"shape": [3, 1000000, 4]}}})", "", "cross.json");
    REQUIRE_FALSE(cross.ok());
    CHECK(contains(cross.error().message, "3 x 1 x 1000 x 1000000"));
    auto direct = parse_session_json(R"({"format": "attention-lab/session", "version": 1,
      "config": {"mode": "direct", "num_heads": 4}, "q": {"random": {"shape": [1000000, 8]}},
      "k": {"random": {"shape": [1000000, 8]}}, "v": {"random": {"shape": [1000000, 8]}}})", "", "direct.json");
    REQUIRE_FALSE(direct.ok());
    CHECK(contains(direct.error().message, "1 x 4 x 1000000 x 1000000"));
  }
}

TEST_CASE("limits: an L = 10^6 session given as numbers loads, and the model refuses its trace at once") {
  // The inputs are already in memory (as a file would be), so only the trace is in question.
  const Index L = 1000000;
  Session s;
  s.config.mode = InputMode::Direct;
  s.config.d_model = 2;
  s.config.num_heads = 1;
  s.q = s.k = s.v = make_tensor(Tensor({1, L, 2}, 0.5f));
  auto estimate = estimate_trace_bytes(s);
  REQUIRE(estimate.ok());
  CHECK(*estimate > 3 * 4 * L * L);  // scores, scaled scores, weights: (1, 1, L, L) floats each
  const long long peak_before = peak_rss_bytes();
  const auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(computes_in_background(s));
  SessionModel model(s);  // refuses in its constructor, without a background computation
  REQUIRE(model.error());
  CHECK(model.error()->code == ErrorCode::TooLarge);
  CHECK(contains(model.error()->message, std::to_string(*estimate) + " bytes"));
  CHECK_FALSE(model.computing());
  CHECK_FALSE(model.trace());
  CHECK(seconds_since(start) < 0.5);
  CHECK(peak_rss_bytes() - peak_before < (64LL << 20));
}
