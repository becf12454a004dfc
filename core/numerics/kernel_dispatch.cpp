#include "numerics/kernel_dispatch.hpp"

#include <cstdlib>
#include <string_view>

#ifdef ATTENTION_LAB_AVX2_KERNELS
// The wider copies' tables (numerics/variants/kernel_table.cpp): the only global symbol of
// kernels_avx2.o and kernels_avx512.o, whose other symbols core/CMakeLists.txt made local.
extern "C" const al::detail::KernelTable al_kernels_avx2;
extern "C" const al::detail::KernelTable al_kernels_avx512;
#endif

namespace al::detail {

namespace {

const KernelTable* choose() {
#ifdef ATTENTION_LAB_AVX2_KERNELS
  const char* forced = std::getenv("ATTENTION_LAB_CPU");
  const std::string_view ceiling = forced ? forced : "";  // the widest copy allowed
  if (ceiling == "baseline") return nullptr;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return nullptr;
  // libgcc's check covers the OS too: it saves the AVX-512 registers (XCR0).
  if (ceiling != "avx2" && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
    return &al_kernels_avx512;
  return &al_kernels_avx2;
#endif
  return nullptr;
}

}  // namespace

const KernelTable* faster_kernels() {
  static const KernelTable* const chosen = choose();
  return chosen;
}

const char* kernel_path() {
  if (const KernelTable* faster = faster_kernels()) return faster->name;
#if defined(__x86_64__)
  return "x86-64 baseline";
#else
  return "portable (Eigen's packets for this architecture)";
#endif
}

}  // namespace al::detail
