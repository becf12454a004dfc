#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/build.sh
(cd build && ctest --output-on-failure -j2 "$@")
# CI (.ci/run sets CI=true) also runs the whole suite under ASan + UBSan and fuzzes the
# loaders for a bounded time; locally run tools/sanitize.sh and tools/fuzz.sh by hand.
if [ "${CI:-}" = true ]; then
  bash tools/sanitize.sh
  bash tools/fuzz.sh
fi
