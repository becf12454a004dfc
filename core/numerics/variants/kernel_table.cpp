// Compiled only into the AVX2+FMA copy of the kernels (core/CMakeLists.txt): the table the
// dispatcher (numerics/kernel_dispatch.cpp) reaches that copy through. Its addresses are
// this copy's own functions, whose symbols are local to kernels_avx2.o.
#include "numerics/attention_kernels.hpp"
#include "numerics/flash_attention.hpp"
#include "numerics/kernel_dispatch.hpp"
#include "numerics/linear_attention.hpp"

namespace {

const al::detail::TraceKernels trace{&al::detail::project_heads, &al::detail::run_heads,
                                     &al::detail::summarize_stage, &al::detail::multiply_rows};
const al::detail::FlashKernels flash{&al::flash_attention, &al::flash_attention_steps};
const al::detail::LinearKernels linear{&al::linear_attention};

}  // namespace

extern "C" const al::detail::KernelTable al_kernels_avx2{"x86-64-v3 (AVX2+FMA)", &trace, &flash, &linear};
