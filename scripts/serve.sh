#!/usr/bin/env bash
# The one command that sets up a fresh Debian 12 machine and serves the default model
# (models/demo, a small Llama trained on Moby-Dick) on http://127.0.0.1:8080.
#   scripts/serve.sh [radiance serve options...]     e.g. scripts/serve.sh --port 9000
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
exec build/bin/radiance serve "$@"
