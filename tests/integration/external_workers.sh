#!/usr/bin/env bash
# External-worker mode, as systemd or Kubernetes runs it: the front end waits for workers that
# join by themselves; a worker killed and started again re-joins, and a request sent while it was
# down is answered once it is back, with the same text as before the kill.
#   external_workers.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1; src=$2
work=$(mktemp -d /tmp/radiance-external-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); echo "PASS $*"; else fail=$((fail+1)); echo "FAIL $*"; fi; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sock="unix:$work/control.sock"
"$bin/radiance" serve --model "$src/models/demo" --port "$port" --cache-dir "$work/cache" \
  --external-workers 1 --workers-listen "$sock" >"$work/serve.log" 2>&1 &
pids+=($!)
ready() { for i in $(seq 1 "$1"); do curl -sf "localhost:$port/ready" >/dev/null && return 0; sleep 0.2; done; return 1; }
not_ready() { for i in $(seq 1 50); do curl -sf "localhost:$port/ready" >/dev/null || return 0; sleep 0.05; done; return 1; }
for i in $(seq 1 100); do curl -s "localhost:$port/health" >/dev/null && break; sleep 0.1; done
check not_ready   # no worker has joined yet
"$bin/radiance-worker" --rank 0 --world 1 --connect "$sock" >"$work/w1.log" 2>&1 &
w1=$!; pids+=($w1)
check ready 300
ask() { curl -sf "localhost:$port/v1/completions" -H 'Content-Type: application/json' \
          -d '{"prompt":"Call me Ishmael.","max_tokens":16,"temperature":0}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["choices"][0]["text"])'; }
before=$(ask)
kill -9 "$w1"
check not_ready
ask >"$work/during.txt" &        # sent while the rank is down: it waits, it is not refused
asker=$!
sleep 0.5
"$bin/radiance-worker" --rank 0 --world 1 --connect "$sock" >"$work/w2.log" 2>&1 &
pids+=($!)
check ready 300
wait "$asker"
same_text() { [ "$(cat "$work/during.txt")" = "$before" ] && [ -n "$before" ]; }
check same_text
logged() { grep -q "rank 0 (pid $w1) lost its connection" "$work/serve.log"; }
check logged
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
