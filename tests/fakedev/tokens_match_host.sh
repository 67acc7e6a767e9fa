#!/usr/bin/env bash
# tokens_match_host.sh ENGINEBENCH CONVERT MODEL_DIR HOMES — the same decode (3 sequences, f32 KV,
# libref's arithmetic) on the host and on libfakedev's pretend card, where the tokens are picked by
# the argmax op (greedy) or the sample op (temperature, top_k, top_p, min_p), the decode steps
# replay as graphs and run pipelined (and once in lockstep), and on two ranks of pretend cards (tensor-parallel decode graphs holding the
# collectives): the token streams must be equal. On the host the sampler draws from the logits.
set -euo pipefail
bench=$1 convert=$2 model=$3 homes=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$convert" "$model" -o "$tmp/m.rad" >/dev/null
run() {  # run NAME ARGS...: the token lines (and the sample line) of one run
  local name=$1
  shift
  "$bench" "$tmp/m.rad" --prefill "" --decode 3 --in 12 --out 10 --tokens --kv-f32 --radiance-home "$homes" "$@" 2>/dev/null |
    grep -E '^(tokens|sample)' > "$tmp/$name"
}
same() {  # same A B WHAT
  if diff <(grep '^tokens' "$tmp/$1") <(grep '^tokens' "$tmp/$2"); then echo "$3 agree: $(grep -m1 '^tokens' "$tmp/$1")"
  else echo "$3 differ"; exit 1; fi
}
run host --placement host --kernels libref
[[ $(grep -c '^tokens' "$tmp/host") -eq 3 ]] || { echo "expected 3 token lines from the host run"; cat "$tmp/host"; exit 1; }
run card --placement device --kernels libfakedev
same host card "greedy tokens on the card and the host"
# The card's decode above is pipelined (each step queued, its tokens fed on the card, before the
# previous step's tokens are read); waiting for every step's tokens must give the same stream.
grep -q 'pipelined' <("$bench" "$tmp/m.rad" --prefill "" --decode 3 --in 12 --out 4 --kv-f32 --radiance-home "$homes" \
  --placement device --kernels libfakedev 2>/dev/null) || { echo "the card's decode did not run pipelined"; exit 1; }
run card_lockstep --placement device --kernels libfakedev --lockstep
same card card_lockstep "pipelined and lockstep greedy tokens on the card"
run tp2 --placement device --kernels libfakedev --tp 2
same host tp2 "greedy tokens of two ranks and the host"
# Past 256 positions the block tables on the card widen (a decode graph of its own is recorded
# for the wider tables) while the step still picks on the card inside the graph.
run host_long --placement host --kernels libref --decode 2 --in 240 --out 30
run card_long --placement device --kernels libfakedev --decode 2 --in 240 --out 30
same host_long card_long "greedy tokens across 256 positions on the card and the host"
# Sampling: a cut of each kind, all of them, and none; each must really be drawn on the card.
for s in 0.8,40,0.95,0.02 1.3,0,1,0 0.7,0,0.8,0 1,5,1,0 1,0,1,0.1; do
  run host_s --placement host --kernels libref --sample $s
  run card_s --placement device --kernels libfakedev --sample $s
  grep -q 'drawn on the card' "$tmp/card_s" || { echo "--sample $s was not drawn on the card:"; cat "$tmp/card_s"; exit 1; }
  grep -q 'drawn on the host' "$tmp/host_s" || { echo "--sample $s on the host plan was not drawn by the host sampler"; exit 1; }
  same host_s card_s "sampled tokens ($s) on the card and the host"
done
# The draws differ from greedy decoding (so the settings reached the op).
if diff -q <(grep '^tokens' "$tmp/host") <(grep '^tokens' "$tmp/card_s") >/dev/null; then
  echo "sampling at temperature 1 gave the greedy tokens: the settings did not reach the sampler"; exit 1
fi
run tp2_s --placement device --kernels libfakedev --tp 2 --sample 0.8,40,0.95,0.02
run host_s --placement host --kernels libref --sample 0.8,40,0.95,0.02
same host_s tp2_s "sampled tokens of two ranks and the host"
