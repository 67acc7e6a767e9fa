#!/usr/bin/env bash
# Serving overhead without a model: `radiance serve` on libnoopcard (a pretend card whose ops do
# nothing, whose argmax is one fixed visible token, and whose steps take BASE + PER_TOKEN x tokens
# microseconds), driven by radbench at each concurrency. What it measures is what a real card's
# serving adds to its steps: HTTP, tokenising, scheduling, the step transport, the worker's host
# work, detokenising and SSE. The default step cost is the H200's Llama-3.1-8B decode step
# (rad-enginebench: 7.8 ms at 64 rows, 15.2 ms at 256 -> 5340 us + 38.5 us per token); STEP_US=0,0
# measures the host path alone.
#
#   bench/serving/serving_overhead.sh [BUILD_DIR] [-- extra serve args]
#   CONCURRENCY="1 64 256" OUT_TOKENS=128 PROMPT_TOKENS=128 STEP_US=5340,38.5 PORT=8097
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift $(( $# > 0 ? 1 : 0 ))
[[ "${1:-}" == "--" ]] && shift
port=${PORT:-8097}
home="$build/tools/rad-stepbench/noopcard_home:$build/share/radiance"
[[ -f $build/tools/rad-stepbench/noopcard_home/kernels/libnoopcard.so ]] ||
    { echo "build libnoopcard_plugin, radiance, radiance-worker and arch_llama in $build first" >&2; exit 1; }

RADIANCE_NOOP_STEP_US=${STEP_US:-5340,38.5} "$build/bin/radiance" serve --model "$root/models/demo" \
    --kernels libnoopcard --placement device --radiance-home "$home" --port "$port" \
    --max-seqs 256 --max-ctx 512 --max-queue 1024 "$@" >/tmp/serving_overhead.$$.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f /tmp/serving_overhead.$$.log' EXIT
for _ in $(seq 120); do
    curl -sf "localhost:$port/ready" >/dev/null && break
    kill -0 $server 2>/dev/null || { cat /tmp/serving_overhead.$$.log >&2; exit 1; }
    sleep 0.5
done
header=
for c in ${CONCURRENCY:-1 64 256}; do
    python3 "$root/tools/radbench/radbench.py" --url "http://127.0.0.1:$port" --concurrency "$c" \
        --requests $(( c > 4 ? 2 * c : 8 )) --prompt-tokens "${PROMPT_TOKENS:-128}" --token-prompts \
        --output-tokens "${OUT_TOKENS:-128}" $header
    header=--no-header
done
