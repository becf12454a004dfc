#!/usr/bin/env bash
# Builds the Debian package (cpack -G DEB, see cmake/package.cmake) in ./build-deb (or
# $BUILD_DIR) and prints its path: build-deb/attention-lab_<version>_<arch>.deb.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-deb}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DATTENTION_LAB_BUILD_BENCH=OFF >/dev/null
cmake --build "$build_dir" -j2
(cd "$build_dir" && cpack -G DEB >/dev/null)
ls "$build_dir"/attention-lab_*.deb
