#!/usr/bin/env bash
# Quantised containers on the pretend card: the engine's device side of gemm_q (every plane of a
# weight uploaded and handed to the row as its operands, the arena and graphs around it) gives the
# host's greedy tokens for int8, int4 with a zero point and symmetric int4 with a group that is not a
# whole number of 32 codes; and an encoding the card's library has no row for (libfakedev's gemm_q
# row leaves fp8 out, for this) fails the plan naming gemm_q: nothing is dequantised on the way.
# Mutations (2026-12-07): the llama source declaring a quantised projection as plain `gemm` made the
# plan fail on the weight's encoding instead (the refusal check wants gemm_q named); the engine's
# upload_weights copying half the bytes of 4-bit planes made the int4 tokens differ.
# usage: quantised_on_card.sh RAD_CONVERT RAD_GOLDEN RAD_ENGINEBENCH FIXTURE HOMES
set -uo pipefail
convert=$1 golden=$2 bench=$3 fixture=$4 homes=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
recipe() { printf 'token_embd.weight cast\n*norm* cast\n%s\n' "$2" > "$dir/$1.recipe"; }
recipe int8 '* rtn bits=8 group=32'
recipe int4 'blk.1.ffn_down.* rtn bits=4 group=16
* rtn bits=4 group=32 zero=1'
recipe fp8 '* fp8'
for r in int8 int4 fp8; do
  "$convert" "$fixture" -o "$dir/$r.rad" --recipe "$dir/$r.recipe" > "$dir/convert.log" 2>&1 || { cat "$dir/convert.log"; exit 1; }
done
tokens() {  # tokens RAD ARGS...: the token lines of a 3-sequence greedy decode
  local rad=$1
  shift
  "$bench" "$rad" --prefill "" --decode 3 --in 12 --out 10 --tokens --kv-f32 --radiance-home "$homes" "$@" 2>&1 | grep '^tokens'
}
for r in int8 int4; do
  host=$(tokens "$dir/$r.rad" --placement host --kernels libref)
  card=$(tokens "$dir/$r.rad" --placement device --kernels libfakedev)
  [[ $(grep -c '^tokens' <<<"$host") -eq 3 ]] || { echo "$r: expected 3 token lines from the host run:"; echo "$host"; exit 1; }
  if [[ $host != "$card" ]]; then
    echo "FAIL: $r tokens differ between the host and the pretend card:"
    diff <(echo "$host") <(echo "$card")
    exit 1
  fi
  echo "$r: the card's tokens are the host's: $(head -1 <<<"$card")"
done
out=$("$golden" "$fixture" --in-process --model "$dir/fp8.rad" --placement device --kernels libfakedev --radiance-home "$homes" 2>&1)
if grep -q "no kernel row serves op 'gemm_q'" <<<"$out"; then
  echo "fp8 refused by name: $(grep -m1 "gemm_q" <<<"$out")"
  exit 0
fi
echo "FAIL: the fp8 plan did not name gemm_q:"
echo "$out" | head -20
exit 1
