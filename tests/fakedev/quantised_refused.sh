#!/usr/bin/env bash
# A quantised container on a card whose library has no gemm_q row (libfakedev, like libgpu today)
# fails its plan naming gemm_q: nothing is dequantised to reach a row that exists.
# Mutation (2026-12-07): the llama source declaring a quantised projection as plain `gemm` made the
# plan fail on the weight's encoding instead, and this check (which wants gemm_q named) failed.
# usage: quantised_refused.sh RAD_CONVERT RAD_GOLDEN FIXTURE HOMES
set -uo pipefail
convert=$1 golden=$2 fixture=$3 homes=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'token_embd.weight cast\n*norm* cast\n* rtn bits=8 group=32\n' > "$dir/int8.recipe"
"$convert" "$fixture" -o "$dir/q.rad" --recipe "$dir/int8.recipe" > "$dir/convert.log" 2>&1 || { cat "$dir/convert.log"; exit 1; }
out=$("$golden" "$fixture" --in-process --model "$dir/q.rad" --placement device --kernels libfakedev --radiance-home "$homes" 2>&1)
if grep -q "no kernel row serves op 'gemm_q'" <<<"$out"; then
  echo "refused by name: $(grep -m1 "gemm_q" <<<"$out")"
  exit 0
fi
echo "FAIL: the plan did not name gemm_q:"
echo "$out" | head -20
exit 1
