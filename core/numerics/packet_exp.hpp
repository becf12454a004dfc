#pragma once
// exp(x) for x ≤ 0 on one of Eigen's float packets: the softmax's exp(score − row max).
// Eigen's pexp handles any argument, and its 2^m step (pldexp) takes as many
// instructions as the polynomial; here m is rounded with the 1.5·2²³ trick, so the same
// addition leaves m + 127 in the low bits of a float, and 2^m is those bits shifted into
// the exponent. About half the instructions of pexp, for 1–2 ulp (tests/core/numerics/
// test_packet_exp.cpp checks it against std::exp in double).
//
// Valid for x ≥ kExpNormalFloor (2^m stays a normal float); the caller sets the values
// below it to 0 (they are under 1.1e-38). NaN gives NaN.
#include <Eigen/Core>

namespace al::detail {

// ln 2 · (−126.5): m = round(x·log₂e) ≥ −126 from here up.
constexpr float kExpNormalFloor = -87.68f;

template <typename Packet>
Packet exp_nonpositive(const Packet& x) {
  using namespace Eigen::internal;
  using IntPacket = typename unpacket_traits<Packet>::integer_packet;
  // 1.5·2²³ + 127: adding it rounds x·log₂e to an integer m (the float's ulp is 1 there)
  // and leaves m + 127 in the low mantissa bits, ready to become 2^m's exponent.
  const Packet magic = pset1<Packet>(12583039.0f);
  const Packet t = pmadd(x, pset1<Packet>(1.44269504088896341f), magic);
  const Packet m = psub(t, magic);
  // r = x − m·ln 2, ln 2 in two parts (Cody and Waite): |r| ≤ ln 2 / 2.
  Packet r = pmadd(m, pset1<Packet>(-0.693359375f), x);
  r = pmadd(m, pset1<Packet>(2.12194440e-4f), r);
  // exp(r) = 1 + r + r²·P(r), Cephes' minimax coefficients (as Eigen's pexp).
  Packet p = pmadd(pset1<Packet>(1.9875691500e-4f), r, pset1<Packet>(1.3981999507e-3f));
  p = pmadd(p, r, pset1<Packet>(8.3334519073e-3f));
  p = pmadd(p, r, pset1<Packet>(4.1665795894e-2f));
  p = pmadd(p, r, pset1<Packet>(1.6666665459e-1f));
  p = pmadd(p, r, pset1<Packet>(5.0000001201e-1f));
  const Packet exp_r = pmadd(p, pmul(r, r), padd(r, pset1<Packet>(1.0f)));
  const Packet two_to_m = preinterpret<Packet>(plogical_shift_left<23>(preinterpret<IntPacket>(t)));
  return pmul(exp_r, two_to_m);
}

}  // namespace al::detail
