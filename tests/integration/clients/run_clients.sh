#!/usr/bin/env bash
# Starts radiance serve on the demo model and runs the official SDK clients and curl against it.
#   run_clients.sh RADIANCE_BIN SOURCE_DIR
set -euo pipefail
bin=$1; src=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/radiance-clients-XXXXXX)
trap 'kill $server 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
if [ ! -d "$here/node_modules/openai" ]; then
  (cd "$here" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --model "$src/models/demo" --port "$port" --cache-dir "$work/cache" --embeddings >"$work/serve.log" 2>&1 &
server=$!
for i in $(seq 1 300); do curl -sf "localhost:$port/ready" >/dev/null && break; sleep 0.2; done
# curl, as a person would.
out=$(curl -sf "localhost:$port/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"Who is the captain of the Pequod?"}],"max_tokens":12,"temperature":0}')
echo "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["choices"][0]["message"]["content"], j; print("PASS curl chat")'
node "$here/clients_test.mjs" "http://127.0.0.1:$port"
