#pragma once
// The dropout keep mask, as a function rather than a stored tensor: the
// kernels, flash attention, the explanation and the torch exporter all ask it.
#include <cstdint>

#include "base/tensor.hpp"

namespace al {

// The deterministic keep/drop decision for one weight (so a view can explain a
// dropped cell without the trace storing a keep mask): flat index into (B,h,Lq,Lk).
bool dropout_keeps(std::uint64_t seed, double p, Index flat_index);

}  // namespace al
