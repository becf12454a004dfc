#!/usr/bin/env bash
# Cross-builds core, its doctest suite and the headless attention-lab for aarch64 (Eigen's NEON
# packets) with Debian's g++-aarch64-linux-gnu, and runs the core tests and a trace under qemu-user.
# By hand, not in CI: emulated, the core tests take about 4 minutes on a 2-core machine.
#   BUILD_DIR   build folder (default build-aarch64)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-aarch64}
bash tools/deps.sh
missing=()
for p in g++-aarch64-linux-gnu qemu-user; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# stb, Eigen, nlohmann-json and doctest are header-only: the host's pkg-config and CMake files serve.
PKG_CONFIG_LIBDIR=/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
  cmake -S . -B "$build_dir" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  -DATTENTION_LAB_BUILD_GUI=OFF -DATTENTION_LAB_BUILD_BENCH=OFF >/dev/null
cmake --build "$build_dir" -j2 --target core_tests attention-lab
run=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
"${run[@]}" "$build_dir/tests/core_tests"
"${run[@]}" "$build_dir/app/attention-lab" --version
"${run[@]}" "$build_dir/app/attention-lab" trace seed-003-example --summary
