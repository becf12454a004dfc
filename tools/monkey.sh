#!/usr/bin/env bash
# A longer monkey run than CI's (tests/gui/test_monkey.py): random input on the
# real window under Xvfb. Usage: bash tools/monkey.sh [SECONDS_PER_PRESET] [SEED]
# (defaults 120 and a seed from the clock, printed so a failure can be replayed).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-120}"
seed="${2:-$(date +%s)}"
echo "monkey: ${seconds} s per preset, seed ${seed}"
cd "$root/tests/gui"
exec xvfb-run -a -s "-screen 0 1920x1080x24 -noreset" /usr/bin/python3 test_monkey.py \
  "$root/build/app/attention-lab" "$root" --seconds-per-preset "$seconds" --seed "$seed"
