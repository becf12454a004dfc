#!/usr/bin/env bash
# "Runs on any x86-64": no code in the libraries the program is linked from uses an AVX
# register (ymm/zmm) except the wider copies of the kernels, which must (else a copy was not
# compiled for its instructions): AVX2+FMA, and AVX-512, whose panel GEMM uses the registers
# only AVX-512VL has (ymm16-31).
#   $1 build folder
set -euo pipefail
build=$(realpath "$1")
fail() { echo "FAIL: $*" >&2; exit 1; }
uses_avx() { objdump -d --no-show-raw-insn "$1" | grep -E '%[yz]mm[0-9]' >/dev/null; }  # not -q: no SIGPIPE

for copy in avx2 avx512; do
  [ -f "$build/core/kernels_$copy.o" ] || fail "no $build/core/kernels_$copy.o"
  uses_avx "$build/core/kernels_$copy.o" || fail "the $copy kernels use no AVX register"
  # The only global symbol of a copy is its table: nothing else can replace a baseline copy.
  globals=$(nm --defined-only -g "$build/core/kernels_$copy.o" | awk '{print $3}')
  [ "$globals" = "al_kernels_$copy" ] || fail "kernels_$copy.o exports more than its table: $globals"
done
objdump -d --no-show-raw-insn "$build/core/kernels_avx512.o" | grep -E '%ymm(1[6-9]|2[0-9]|3[01])' >/dev/null \
  || fail "the AVX-512 kernels use none of AVX-512VL's registers ymm16-31"

# The libraries the program is linked from (archives hold only current objects, unlike a build
# folder that may keep objects of since-moved sources), member by member.
checked=0
while IFS= read -r -d '' library; do
  offenders=$(objdump -d --no-show-raw-insn "$library" | awk '
    /^[^ ].*:[ \t]+file format/ { member = $1 }
    /%[yz]mm[0-9]/ && member !~ /kernels_avx(2|512)\.o/ { print member }' | sort -u)
  [ -z "$offenders" ] || fail "$offenders in $library use AVX registers: an x86-64 without AVX would stop with an illegal instruction"
  checked=$((checked + 1))
done < <(find "$build" -name 'lib*.a' -print0)
[ "$checked" -ge 7 ] || fail "only $checked libraries found in $build"
echo "$checked libraries free of AVX outside the wider kernels; kernels_avx2.o and kernels_avx512.o use AVX and" \
  "export only their tables"
