#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer in ./build-asan
# (-DATTENTION_LAB_SANITIZE=ON) and runs the whole ctest suite there. Any ASan/UBSan
# report fails the test it happens in, leaks included. Leaks that system libraries (Mesa,
# LLVM, X11, fontconfig) keep for the life of the process are suppressed by tools/lsan.supp.
# The GUI keeps Mesa's GL driver loaded in this build (app/gui/platform/gl_driver_pin.cpp): Mesa
# unloads it at exit, and the blocks it held then looked leaked from a module LSan could
# not name, so before that the GUI tests ran without leak checking.
#   BUILD_DIR   build folder (default build-asan); extra arguments go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build_dir=${BUILD_DIR:-build-asan}

# The trace runs its one portable copy of the kernels here: the wider copies' link step (ld -r,
# hidden symbols) is for shipped binaries, not instrumented ones. The code only those copies
# compile (16-lane tiles, streamed stores, the rows' 16-float blocks) is instrumented through the
# panel GEMM's and softmax rows' own tests, built with each copy's flags (wide_kernel_tests_*,
# tests/CMakeLists.txt; skipped on a CPU without the instructions).
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTENTION_LAB_SANITIZE=ON \
  -DATTENTION_LAB_BUILD_BENCH=OFF -DATTENTION_LAB_AVX2_KERNELS=OFF >/dev/null
cmake --build "$build_dir" -j2

# intercept_tls_get_addr=0: gcc 12's LeakSanitizer tracks dynamic TLS blocks through __tls_get_addr and, on
# Debian 12's glibc, sometimes records a bogus block for a module the GL stack loads ("DTLS 12 at
# 0x1310-0x1800002412"); scanning it crashed the leak checker at exit ("Tracer caught signal 11") in about
# one GUI run in ten under load. Without that tracking dynamic TLS is not scanned as a root: only the GL
# libraries, whose leaks tools/lsan.supp suppresses anyway, keep pointers there; our TLS is static.
asan="intercept_tls_get_addr=0:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=$root/tools/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build_dir"
ASAN_OPTIONS="detect_leaks=1:$asan" ctest --output-on-failure -j2 "$@"
