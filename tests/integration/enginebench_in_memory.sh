#!/usr/bin/env bash
# enginebench_in_memory.sh ENGINEBENCH CONVERT CONFIG_JSON: rad-enginebench given a folder with a
# config.json alone draws the container in memory (a memory file, nothing on disk) and decodes the
# same tokens as the container rad-convert --random-weights 0 writes to disk, plain and by
# the int8 recipe; the folder holds nothing more afterwards.
# Mutation seen failing: the in-memory draw seeded 1 instead of rad-convert's 0 (tokens differ).
set -euo pipefail
bench=$1 convert=$2 config=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/cfg"
cp "$config" "$tmp/cfg/config.json"
tokens() {  # tokens MODEL ARGS...: the token lines of a decode on the host, drawn at temperature 1
  # (random weights' logits are nearly flat: greedy tokens repeat one id, draws follow every logit)
  local model=$1
  shift
  "$bench" "$model" --prefill "" --decode 1,3 --in 9 --out 7 --tokens --sample 1,0,1,0 --placement host --kernels libcpu,libref "$@" 2>&1 |
    grep '^tokens' || true
}
for recipe in "" int8; do
  "$convert" "$tmp/cfg" -o "$tmp/disk.rad" --random-weights 0 ${recipe:+--recipe $recipe} >/dev/null 2>&1
  disk=$(tokens "$tmp/disk.rad")
  mem=$(tokens "$tmp/cfg" ${recipe:+--recipe $recipe})
  [[ -n $disk ]] || { echo "FAIL: no tokens from the container on disk (recipe '${recipe:-none}')"; exit 1; }
  if [[ $disk != "$mem" ]]; then
    echo "FAIL: the weights drawn in memory decode other tokens than rad-convert's container (recipe '${recipe:-none}'):"
    diff <(echo "$disk") <(echo "$mem") || true
    exit 1
  fi
  rm "$tmp/disk.rad"
  echo "recipe '${recipe:-none}': in memory and on disk decode the same tokens: $(head -1 <<<"$mem")"
done
left=$(ls -A "$tmp/cfg")
[[ $left == config.json ]] || { echo "FAIL: the folder holds more than config.json after the draws: $left"; exit 1; }
"$bench" "$tmp/cfg" --prefill 16 --decode , --placement host --kernels libcpu,libref 2>&1 | grep -q "weights in memory" ||
  { echo "FAIL: no line saying the weights were drawn in memory"; exit 1; }
echo "PASS"
