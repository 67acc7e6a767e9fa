#!/usr/bin/env bash
# A mixture-of-experts checkpoint radiance cannot serve is refused at conversion, naming what is
# wrong: a router other than softmax top-k (scoring_func), more picks than experts, and a missing
# expert tensor (named with its file). Mutation: dropping the scoring_func check in the llama
# source made the first case convert silently (exit 0).
# usage: moe_bad_input.sh BIN_DIR MIXTRAL_FIXTURE_DIR
set -uo pipefail
bin=$1 fx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect NAME REGEX DIR [ARGS...]: rad-convert on DIR fails and says REGEX
    local name=$1 re=$2 dir=$3
    shift 3
    out=$("$bin/rad-convert" "$dir" -o "$tmp/$name.rad" "$@" 2>&1)
    rc=$?
    if [[ $rc -eq 0 ]] || ! grep -qE "$re" <<<"$out"; then
        echo "FAIL $name (exit $rc): $out"
        fail=1
    else
        echo "PASS $name: $(grep -E "$re" <<<"$out" | head -1)"
    fi
}
edit_config() {  # edit_config DIR PYTHON-EXPRESSION-ON-c
    mkdir -p "$1"
    python3 -c "import json,sys; c=json.load(open(sys.argv[1])); $2; json.dump(c, open(sys.argv[2], 'w'))" "$fx/config.json" "$1/config.json"
}
edit_config "$tmp/sigmoid" "c['scoring_func'] = 'sigmoid'"
expect scoring_func "scoring_func = sigmoid is not served" "$tmp/sigmoid" --random-weights 1
edit_config "$tmp/k9" "c['num_experts_per_tok'] = 9"
expect top_k "9 of 4 experts" "$tmp/k9" --random-weights 1
mkdir -p "$tmp/missing"
cp "$fx/config.json" "$tmp/missing/"
python3 - "$fx/model.safetensors" "$tmp/missing/model.safetensors" <<'PY'
import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]; h = json.loads(f.read(n)); data = f.read()
drop = "model.layers.1.block_sparse_moe.experts.3.w3.weight"
out, blob = {}, b""
for k, v in h.items():
    if k == "__metadata__" or k == drop:
        continue
    a, b = v["data_offsets"]
    out[k] = dict(dtype=v["dtype"], shape=v["shape"], data_offsets=[len(blob), len(blob) + b - a])
    blob += data[a:b]
hj = json.dumps(out).encode()
hj += b" " * ((8 - len(hj) % 8) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(hj)) + hj + blob)
PY
expect missing_expert "experts\.3\.w3\.weight' is missing from .*model\.safetensors" "$tmp/missing"
exit $fail
