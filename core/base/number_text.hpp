#pragma once
// Numbers in messages: the shortest text that reads back as the same double
// (-1e-20, 0.1, 1e+39), never printf's six fixed decimals ("-0.000000").
#include <string>

namespace al {

// Doubles at or above 2^128 - 2^103 (FLT_MAX plus half a step) round to infinity as float32.
constexpr double kFloatOverflow = 0x1.ffffffp+127;

// NaN, inf and -inf for the non-finite values.
std::string shortest_text(double value);

}  // namespace al
