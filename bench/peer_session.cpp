#include "peer_session.hpp"

#include <cmath>

#include "base/random.hpp"

namespace al::bench {

Session peer_session(Index len) {
  auto random = [](std::vector<Index> shape, std::uint64_t seed, double stddev) {
    return make_tensor(random_normal(std::move(shape), seed, stddev));
  };
  Session s;
  s.config.d_model = kDModel;
  s.config.num_heads = kHeads;
  s.x = random({1, len, kDModel}, 1, 1.0);
  const double w = 1.0 / std::sqrt(static_cast<double>(kDModel));
  s.weights.w_q = random({kDModel, kDModel}, 2, w);
  s.weights.w_k = random({kDModel, kDModel}, 3, w);
  s.weights.w_v = random({kDModel, kDModel}, 4, w);
  s.weights.w_o = random({kDModel, kDModel}, 5, w);
  s.weights.b_q = random({kDModel}, 6, 0.1);
  s.weights.b_k = random({kDModel}, 7, 0.1);
  s.weights.b_v = random({kDModel}, 8, 0.1);
  s.weights.b_o = random({kDModel}, 9, 0.1);
  return s;
}

}  // namespace al::bench
