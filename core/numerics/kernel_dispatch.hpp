#pragma once
// The one dispatch point of the hot kernels (trace GEMMs, softmax, the backward pass,
// FlashAttention, linear attention). The whole program is compiled for the portable x86-64
// baseline; on x86-64 the kernel files are compiled twice more (core/CMakeLists.txt): with
// AVX2+FMA, and the same with AVX-512VL for the panel GEMM's register tiles. The widest copy
// the CPU runs is used; $ATTENTION_LAB_CPU caps it: "baseline", or "avx2". Each dispatched
// entry starts with AL_KERNEL_DISPATCH, which hands the call to the faster copy; inside a copy
// (AL_KERNEL_VARIANT) the macro is empty. No x86 intrinsics anywhere: Eigen picks its packets
// (SSE2, AVX2, NEON) from the compiler flags of each copy.

namespace al::detail {

struct TraceKernels;     // attention_kernels.hpp
struct BackwardKernels;  // backward.hpp
struct FlashKernels;     // flash_attention.hpp
struct LinearKernels;    // linear_attention.hpp
struct SummaryKernels;   // stage_summary.hpp

struct KernelTable {
  const char* name;  // what --version shows
  const TraceKernels* trace;
  const BackwardKernels* backward;
  const FlashKernels* flash;
  const LinearKernels* linear;
  const SummaryKernels* summary;
};

// The faster copy when this CPU runs it and it is not switched off; else null (run the
// baseline code). Decided once, on the first call.
const KernelTable* faster_kernels();

// The active path, e.g. "x86-64-v3 (AVX2+FMA)" or "x86-64 baseline".
const char* kernel_path();

}  // namespace al::detail

#ifdef AL_KERNEL_VARIANT
#define AL_KERNEL_DISPATCH(group, name, ...)
#else
#define AL_KERNEL_DISPATCH(group, name, ...)                                                \
  if (const ::al::detail::KernelTable* faster = ::al::detail::faster_kernels()) \
  return faster->group->name(__VA_ARGS__)
#endif
