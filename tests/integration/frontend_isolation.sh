#!/usr/bin/env bash
# The front end opens no plugin (issue [15]): `radiance serve` on a Hugging Face folder converts
# it with a rad-convert child and serves it, and once ready its own memory maps hold no library
# of the plugin homes (kernels/, architectures/), while its worker's do (the check can see one).
# Mutation run (2026-12-04): serve() loading core::Registry again (as it did to convert and for
# the default model; the CMake layering rule lifted to let it link) fails "front end maps no
# plugin" with libcpu.so, libref.so and the four libarch_*.so.
# usage: frontend_isolation.sh RADIANCE_BIN MODEL_DIR
set -uo pipefail
bin=$1
model=$2
work=$(mktemp -d)
fail=0
say() { echo "FAIL $*"; fail=1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --model "$model" --port "$port" --cache-dir "$work/cache" >"$work/log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/ready" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$port/ready" >/dev/null || say "not ready: $(tail -5 "$work/log")"
plugins='/share/radiance/(kernels|architectures)/[^ ]*\.so'
mapped=$(grep -oE "$plugins" /proc/$pid/maps | sort -u)
[ -z "$mapped" ] || say "front end maps no plugin; it maps: $mapped"
worker=$(pgrep -P $pid -f radiance-worker | head -1)
[ -n "$worker" ] && grep -qE "$plugins" /proc/$worker/maps || say "the worker (pid ${worker:-none}) should map its plugins"
ls "$work"/cache/*.rad >/dev/null 2>&1 || say "no converted container in the cache"
ls "$work"/cache/*.part-* >/dev/null 2>&1 && say "a partial conversion was left behind"
out=$(curl -s "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
  -d '{"prompt":"Call me","max_tokens":4,"temperature":0}')
grep -q '"finish_reason"' <<<"$out" || say "no completion: $out"
kill $pid
wait $pid
# A folder rad-convert refuses: the front end's error carries rad-convert's words, exit 1.
mkdir -p "$work/bad" && echo '{"model_type": "nonesuch", "architectures": ["NoneSuch"]}' >"$work/bad/config.json"
err=$("$bin" serve --model "$work/bad" --port 0 --cache-dir "$work/cache" 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q "rad-convert exited" <<<"$err" || say "a folder rad-convert refuses: exit 1 with its error (rc $rc: $err)"
rm -rf "$work"
[ $fail -eq 0 ] && echo "ok: the front end maps no plugin; rad-convert converted the folder"
exit $fail
