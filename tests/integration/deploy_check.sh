#!/usr/bin/env bash
# The deployment files and the metrics, checked by the real tools: systemd-analyze verify on the
# units, the Kubernetes YAML parsed, promtool check metrics on a live /metrics, and a real
# Prometheus server that scrapes us and finds the series.
#   deploy_check.sh BUILD_BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1; src=$2
work=$(mktemp -d /tmp/radiance-deploy-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); echo "PASS $*"; else fail=$((fail+1)); echo "FAIL $*"; fi; }

# 1. systemd units, with the install paths pointed at this build.
mkdir -p "$work/units"
for u in "$src"/deploy/systemd/*.service; do
  sed -e "s#/opt/radiance/bin#$bin#g" "$u" > "$work/units/$(basename "$u")"
done
verify_units() { (cd "$work/units" && SYSTEMD_LOG_LEVEL=err systemd-analyze verify --man=no radiance.service radiance-worker@0.service); }
check verify_units

# 2. Kubernetes manifests parse as YAML (every document).
parse_yaml() { python3 -c 'import sys, yaml; docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]; assert len(docs) >= 3, docs' "$src/deploy/k8s/radiance.yaml"; }
check parse_yaml

# 3. A live server's /metrics passes promtool.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin/radiance" serve --model "$src/models/demo" --port "$port" --cache-dir "$work/cache" >"$work/serve.log" 2>&1 &
pids+=($!)
for i in $(seq 1 300); do curl -sf "localhost:$port/ready" >/dev/null && break; sleep 0.2; done
curl -sf "localhost:$port/v1/completions" -H 'content-type: application/json' \
  -d '{"prompt":"Call me Ishmael.","max_tokens":8,"temperature":0}' >/dev/null
# promtool lints ':' in names (it reserves colons for recording rules); the `radiance:` prefix is
# vLLM's convention, asked for on purpose, so that one complaint is accepted and nothing else is:
# a parse error or any other lint problem fails.
promtool_check() {
  curl -sf "localhost:$port/metrics" >"$work/metrics.txt"
  local rc=0
  promtool check metrics <"$work/metrics.txt" >"$work/promtool.txt" 2>&1 || rc=$?
  cat "$work/promtool.txt"
  [ "$rc" -eq 0 ] && return 0
  [ "$rc" -eq 3 ] && ! grep -v "metric names should not contain ':'" "$work/promtool.txt" | grep -q .
}
check promtool_check

# 4. A real Prometheus scrapes us and finds the series.
pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<CFG
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: radiance
    static_configs: [{targets: ["127.0.0.1:$port"]}]
CFG
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$pport" >"$work/prom.log" 2>&1 &
pids+=($!)
found_series() {
  for i in $(seq 1 60); do
    out=$(curl -sf "localhost:$pport/api/v1/query?query=radiance:generation_tokens_total" || true)
    if echo "$out" | grep -q '"value"'; then echo "$out" | head -c 300; echo; return 0; fi
    sleep 0.5
  done
  return 1
}
check found_series
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
