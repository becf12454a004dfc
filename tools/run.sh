#!/usr/bin/env bash
# Installs what is missing, builds, and opens Attention Lab on the default example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/build.sh
exec ./build/app/attention-lab "$@"
