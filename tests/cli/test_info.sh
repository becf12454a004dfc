#!/usr/bin/env bash
# --help names every command, --version prints the version, --list-presets
# puts a name at the start of each line followed by its description.
set -euo pipefail
bin=$1
src=$2

help=$("$bin" --help)
for word in "trace" "--json" "--summary" "export-torch" "screenshot" "--stage" "--size" "--lang" "--head" \
            "--list-presets" "--version" "session.json"; do
  grep -qF -- "$word" <<<"$help" || { echo "FAIL: --help does not mention $word"; exit 1; }
done

version=$(grep -oP 'project\(attention_lab VERSION \K[0-9.]+' "$src/CMakeLists.txt")
[ "$("$bin" --version | head -n 1)" = "attention-lab $version" ] || { echo "FAIL: --version: $("$bin" --version)"; exit 1; }
# The second line names the kernels in use; ATTENTION_LAB_CPU=baseline forces the portable ones.
"$bin" --version | grep -q "^kernels: " || { echo "FAIL: --version does not name the kernels"; exit 1; }
if [ "$(uname -m)" = x86_64 ]; then
  ATTENTION_LAB_CPU=baseline "$bin" --version | grep -q "^kernels: x86-64 baseline" \
    || { echo "FAIL: ATTENTION_LAB_CPU=baseline: $(ATTENTION_LAB_CPU=baseline "$bin" --version)"; exit 1; }
fi

"$bin" --list-presets | while read -r name description; do
  [ -n "$description" ] || { echo "FAIL: preset $name has no description"; exit 1; }
  [ -f "$src/assets/presets/$name.json" ] || { echo "FAIL: $name is not a preset file"; exit 1; }
done
"$bin" --list-presets | grep -q "^default " || { echo "FAIL: no default preset"; exit 1; }
echo "help, version and preset list ok"
