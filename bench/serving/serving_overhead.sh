#!/usr/bin/env bash
# Serving overhead without a model: `radiance serve` on libnoopcard (a pretend card whose ops do
# nothing, whose argmax is one fixed visible token, and whose steps take BASE + PER_TOKEN x tokens
# microseconds of its own clock, queued steps one after another), driven by radbench at each
# concurrency. What it measures is what a real card's serving adds to its steps: HTTP, tokenising,
# scheduling, the step transport, the worker's host work, detokenising and SSE. The default step
# cost is the H200's Llama-3.1-8B decode step (rad-enginebench, issue [17]: 6.4 ms at 64 rows,
# 11.7 ms at 256 -> 4630 us + 27.6 us per token); STEP_US=0,0 measures the host path alone.
#
# A server per concurrency and mode (MODES: overlap, the default scheduling, and lockstep,
# --disable-overlap-schedule), ROUNDS times interleaved so that pairs sit next to each other in
# time. Each line is radbench's, then the server's mean inter-token latency (its histogram) and the
# pretend card's busy share over the run (the worker's exit line): 100% means the host's work
# between steps is hidden.
#
#   bench/serving/serving_overhead.sh [BUILD_DIR] [-- extra serve args]
#   CONCURRENCY="1 64 256" OUT_TOKENS=128 PROMPT_TOKENS=128 STEP_US=4630,27.6 PORT=8097 MODES=overlap ROUNDS=1
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift $(( $# > 0 ? 1 : 0 ))
[[ "${1:-}" == "--" ]] && shift
port=${PORT:-8097}
home="$build/tools/rad-stepbench/noopcard_home:$build/share/radiance"
[[ -f $build/tools/rad-stepbench/noopcard_home/kernels/libnoopcard.so ]] ||
    { echo "build libnoopcard_plugin, radiance, radiance-worker and arch_llama in $build first" >&2; exit 1; }
log=/tmp/serving_overhead.$$.log
server=
trap '[[ -n $server ]] && kill $server 2>/dev/null; rm -f $log' EXIT

itl_sum_count() {  # the server's inter-token latency histogram: sum count
    curl -s "localhost:$port/metrics" | awk '/inter_token_latency_seconds_sum/{s=$2} /inter_token_latency_seconds_count/{n=$2} END{print s+0, n+0}'
}

echo "mode     concurrency requests errors steps/s ttft_p50_ms ttft_p99_ms itl_p50_ms itl_p99_ms lat_p50_s out_tok/s   req/s  hit% srv_itl_ms card_busy"
for _ in $(seq "${ROUNDS:-1}"); do
  for c in ${CONCURRENCY:-1 64 256}; do
    for mode in ${MODES:-overlap}; do
      flags=()
      [[ $mode == lockstep ]] && flags=(--disable-overlap-schedule)
      RADIANCE_NOOP_STEP_US=${STEP_US:-4630,27.6} "$build/bin/radiance" serve --model "$root/models/demo" \
          --kernels libnoopcard --placement device --radiance-home "$home" --port "$port" \
          --max-seqs 256 --max-ctx 512 --max-queue 1024 "${flags[@]}" "$@" >"$log" 2>&1 &
      server=$!
      for _ in $(seq 120); do
          curl -sf "localhost:$port/ready" >/dev/null && break
          kill -0 $server 2>/dev/null || { cat "$log" >&2; exit 1; }
          sleep 0.5
      done
      read -r s0 n0 < <(itl_sum_count)
      line=$(python3 "$root/tools/radbench/radbench.py" --url "http://127.0.0.1:$port" --concurrency "$c" \
          --requests $(( c > 4 ? 2 * c : 8 )) --prompt-tokens "${PROMPT_TOKENS:-128}" --token-prompts \
          --output-tokens "${OUT_TOKENS:-128}" --no-header | tail -1)
      read -r s1 n1 < <(itl_sum_count)
      kill -TERM $server; wait $server 2>/dev/null || true
      server=
      busy=$(grep -o 'busy [0-9.]*%' "$log" | tail -1 | cut -d' ' -f2 || true)
      itl=$(awk -v a="$s0" -v b="$s1" -v m="$n0" -v n="$n1" 'BEGIN{printf "%.2f", (n > m) ? 1000 * (b - a) / (n - m) : 0}')
      printf '%-8s %s %10s %9s\n' "$mode" "$line" "$itl" "${busy:--}"
    done
  done
done
