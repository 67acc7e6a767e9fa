#!/usr/bin/env bash
# kv_fp8_tokens.sh ENGINEBENCH CONVERT FIXTURE HOMES: greedy decode with an fp8 KV cache
# (--kv-cache-dtype fp8) on libref and on libcpu gives the same tokens: both store the step's
# rows with rad_kv_fp8.h and read back the same values (libcpu's sums differ in order only).
# 3 sequences of 12-token prompts, 10 decode steps each, and 2 sequences across 256 positions.
# Mutations (2026-12-07, each made in one library, watched fail, undone): libcpu's V scale skipped
# (v read as bare codes); libref's V scale skipped; libref reading the step's own rows unquantised.
# Not caught, as expected: a change both libraries share (rad_kv_fp8.h's scale from amax / 896:
# the tokens change alike; check_kv_ppl.cmake catches it).
set -euo pipefail
bench=$1 convert=$2 fixture=$3 homes=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$convert" "$fixture" -o "$tmp/m.rad" >/dev/null
tokens() {  # tokens KERNELS KV ARGS...: the token lines of a greedy decode on the host
  local kernels=$1 kv=$2
  shift 2
  "$bench" "$tmp/m.rad" --prefill "" --tokens --placement host --kernels "$kernels" --kv-cache-dtype "$kv" --radiance-home "$homes" "$@" \
    2>&1 | grep '^tokens' || true
}
for shape in "--decode 3 --in 12 --out 10" "--decode 2 --in 240 --out 30"; do
  # shellcheck disable=SC2086
  ref=$(tokens libref fp8 $shape)
  # shellcheck disable=SC2086
  cpu=$(tokens libcpu fp8 $shape)
  [[ -n $ref ]] || { echo "FAIL: no tokens from libref with an fp8 cache ($shape)"; exit 1; }
  if [[ $ref != "$cpu" ]]; then
    echo "FAIL: fp8 KV greedy tokens differ between libref and libcpu ($shape):"
    diff <(echo "$ref") <(echo "$cpu") || true
    exit 1
  fi
  # shellcheck disable=SC2086
  f32=$(tokens libref f32 $shape)
  same=$([[ $ref == "$f32" ]] && echo "the same as" || echo "not all the same as")
  echo "fp8 KV ($shape): libref and libcpu agree, $same the f32 cache's: $(head -1 <<<"$ref")"
done
