#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in ./build-fuzz and fuzzes the
# session, .npy and CSV loaders for a bounded time, starting from tests/fuzz/corpus.
# Fails when an input crashes a loader or breaks a property of tests/fuzz/harness.cpp;
# the input is saved under build-fuzz/fuzz-artifacts/ (keep it in tests/fuzz/regressions/).
#   FUZZ_SECONDS   seconds per target (default 20; three targets)
#   BUILD_DIR      build folder (default build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-20}

cmake -S . -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DATTENTION_LAB_FUZZ=ON -DATTENTION_LAB_SANITIZE=ON \
  -DATTENTION_LAB_BUILD_GUI=OFF -DATTENTION_LAB_BUILD_BENCH=OFF -DATTENTION_LAB_AVX2_KERNELS=OFF >/dev/null
cmake --build "$build_dir" -j2 --target fuzz_session fuzz_npy fuzz_csv

artifacts="$build_dir/fuzz-artifacts"
mkdir -p "$artifacts"
status=0
for kind in session npy csv; do
  # The fuzzer adds inputs to its first folder: a scratch copy, not the committed corpus.
  work="$build_dir/fuzz-corpus/$kind"
  mkdir -p "$work"
  extra=()
  [ "$kind" = session ] && extra+=(-dict=tests/fuzz/session.dict)
  echo "fuzz_$kind: ${seconds}s"
  if ! "$build_dir/tests/fuzz/fuzz_$kind" "$work" "tests/fuzz/corpus/$kind" "${extra[@]}" \
      -max_total_time="$seconds" -timeout=30 -rss_limit_mb=3072 -max_len=16384 \
      -artifact_prefix="$artifacts/$kind-" -print_final_stats=1 >"$artifacts/$kind.log" 2>&1; then
    status=1
    grep -E "ERROR|runtime error|property failed|SUMMARY|Test unit written" "$artifacts/$kind.log" | head -n 20 >&2
    echo "fuzz_$kind FAILED: log in $artifacts/$kind.log; copy the input into tests/fuzz/regressions/$kind/" >&2
  else
    grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" "$artifacts/$kind.log" | tr '\n' ' '
    echo
  fi
done
exit $status
