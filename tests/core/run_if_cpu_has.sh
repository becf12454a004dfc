#!/usr/bin/env bash
# Runs a test built for a kernel copy's instructions if this CPU has them, else exits 77
# (skipped): the binary would stop with an illegal instruction before any check.
#   $1 copy (avx2 | avx512)   $2 test binary, then its arguments
set -euo pipefail
copy=$1
shift
case "$copy" in
  avx2) needed="avx2 fma" ;;
  avx512) needed="avx2 fma avx512f avx512vl" ;;
  *) echo "unknown kernel copy: $copy" >&2; exit 2 ;;
esac
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
for flag in $needed; do
  [[ $flags == *" $flag "* ]] || { echo "skipped: this CPU has no $flag"; exit 77; }
done
exec "$@"
