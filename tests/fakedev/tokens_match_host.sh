#!/usr/bin/env bash
# greedy_matches_host.sh ENGINEBENCH CONVERT MODEL_DIR HOMES — the same greedy decode (3 sequences,
# f32 KV, libref's arithmetic) on the host and on libfakedev's pretend card, where the tokens are
# picked by the argmax op and the decode steps replay as graphs, and on two ranks of pretend cards
# (tensor-parallel decode graphs holding the collectives): the token streams must be equal.
set -euo pipefail
bench=$1 convert=$2 model=$3 homes=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$convert" "$model" -o "$tmp/m.rad" >/dev/null
common=(--prefill "" --decode 3 --in 12 --out 10 --tokens --kv-f32 --radiance-home "$homes")
"$bench" "$tmp/m.rad" "${common[@]}" --placement host --kernels libref 2>/dev/null | grep '^tokens' > "$tmp/host"
"$bench" "$tmp/m.rad" "${common[@]}" --placement device --kernels libfakedev 2>/dev/null | grep '^tokens' > "$tmp/card"
[[ $(wc -l < "$tmp/host") -eq 3 ]] || { echo "expected 3 token lines from the host run"; cat "$tmp/host"; exit 1; }
if diff "$tmp/host" "$tmp/card"; then echo "greedy tokens agree: $(head -1 "$tmp/host")"; else echo "the card's greedy tokens differ"; exit 1; fi
"$bench" "$tmp/m.rad" "${common[@]}" --placement device --kernels libfakedev --tp 2 2>/dev/null | grep '^tokens' > "$tmp/tp2"
if diff "$tmp/host" "$tmp/tp2"; then echo "two ranks agree too"; else echo "the two ranks' greedy tokens differ"; exit 1; fi
