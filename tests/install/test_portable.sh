#!/usr/bin/env bash
# "Runs on any x86-64": no code in the libraries the program is linked from uses an AVX
# register (ymm/zmm) except the AVX2+FMA copy of the kernels, which must (else that copy was
# not compiled for AVX2).
#   $1 build folder
set -euo pipefail
build=$(realpath "$1")
fail() { echo "FAIL: $*" >&2; exit 1; }
uses_avx() { objdump -d --no-show-raw-insn "$1" | grep -E '%[yz]mm[0-9]' >/dev/null; }  # not -q: no SIGPIPE

variant=$build/core/kernels_avx2.o
[ -f "$variant" ] || fail "no $variant"
uses_avx "$variant" || fail "the AVX2 kernels use no AVX register"

# The libraries the program is linked from (archives hold only current objects, unlike a build
# folder that may keep objects of since-moved sources), member by member.
checked=0
while IFS= read -r -d '' library; do
  offenders=$(objdump -d --no-show-raw-insn "$library" | awk '
    /^[^ ].*:[ \t]+file format/ { member = $1 }
    /%[yz]mm[0-9]/ && member !~ /kernels_avx2\.o/ { print member }' | sort -u)
  [ -z "$offenders" ] || fail "$offenders in $library use AVX registers: an x86-64 without AVX would stop with an illegal instruction"
  checked=$((checked + 1))
done < <(find "$build" -name 'lib*.a' -print0)
[ "$checked" -ge 7 ] || fail "only $checked libraries found in $build"
# The only global symbol of the AVX2 object is its table: nothing else can replace a baseline copy.
globals=$(nm --defined-only -g "$variant" | awk '{print $3}')
[ "$globals" = al_kernels_avx2 ] || fail "kernels_avx2.o exports more than its table: $globals"
echo "$checked libraries free of AVX outside the AVX2 kernels; kernels_avx2.o uses AVX and exports only al_kernels_avx2"
