#!/usr/bin/env bash
# The one command that sets up a fresh Debian 12 machine and serves the default model.
#   scripts/serve.sh [radiance serve options...]     e.g. scripts/serve.sh --port 8080
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target radiance radiance-worker rad-convert 2>/dev/null ||
  cmake --build build -j"$(nproc)"
MODEL_ARGS=()
if [ -f models/default.rad ]; then MODEL_ARGS=(--model models/default.rad); fi
exec build/bin/radiance serve "${MODEL_ARGS[@]}" "$@"
