// Compiled only into the wider copies of the kernels (core/CMakeLists.txt), each defining
// AL_KERNEL_TABLE and AL_KERNEL_NAME: the table the dispatcher (numerics/kernel_dispatch.cpp) reaches that copy
// through. Its addresses are this copy's own functions, whose symbols are local to its object.
#include "numerics/attention_kernels.hpp"
#include "numerics/backward.hpp"
#include "numerics/flash_attention.hpp"
#include "numerics/kernel_dispatch.hpp"
#include "numerics/linear_attention.hpp"
#include "numerics/stage_summary.hpp"

namespace {

const al::detail::TraceKernels trace{&al::detail::project_heads, &al::detail::run_heads,
                                     &al::detail::multiply_rows};
const al::detail::BackwardKernels backward{&al::backward};
const al::detail::FlashKernels flash{&al::flash_attention, &al::flash_attention_steps};
const al::detail::LinearKernels linear{&al::linear_attention};
const al::detail::SummaryKernels summary{&al::detail::summarize_stage};

}  // namespace

extern "C" const al::detail::KernelTable AL_KERNEL_TABLE{AL_KERNEL_NAME, &trace, &backward, &flash, &linear, &summary};
