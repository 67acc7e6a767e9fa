#!/usr/bin/env bash
# pending_checks.sh: the card checks written without a device machine (sessions 22-23), in order of
# what they unblock, within one 600 s call: (1) transformers fixtures for the new families
# (make_golden.py phi3_*, gemma2_softcap_w12, gemma3_global_linear, gpt2_tiny; $OUT/golden.tgz
# comes back: commit them under tests/golden/fixtures) each checked at once on libref, libcpu and
# the card; (2) the MoE v2 kernels (RADIANCE_GPU_MOE_V2=1) against libref; (3) the v1 rows with
# the longrope and softcap cases; (4) every fixture on the card. Carry .devcarry/bundle.tar.xz
# (scripts/device-bundle.sh) and run: bash bench/gpu/pending_checks.sh
cd "$(dirname "$0")/../.."
export OUT=${OUT:-/tmp/out}
D=bench/gpu/device_run.sh
nccl=/usr/local/cuda/lib64; ls $nccl/libnccl.so.2 >/dev/null 2>&1 || nccl=$(dirname "$(find / -name 'libnccl.so.2' -not -path '/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=/tmp/radbundle/lib:/usr/local/cuda/lib64:$nccl RADIANCE_HOME=/tmp/radbundle/share/radiance
mkdir -p /tmp/radbundle && tar -C /tmp/radbundle -xJf .devcarry/bundle.tar.xz
nvidia-smi --query-gpu=name --format=csv,noheader
echo "##### makegolden"; GOLDEN_CASES="phi3_longrope_partial phi3_window_h3 gemma2_softcap_w12 gemma3_global_linear gpt2_tiny" timeout 170 bash $D makegolden
tar -C $OUT -czf $OUT/golden.tgz golden
echo "##### new fixtures: libref 1e-5 / libcpu 1e-5 / card"
for f in $OUT/golden/*; do
  for how in "--kernels libref --tol 1e-5" "--kernels libcpu,libref --tol 1e-5" "--in-process --placement device --tol 2e-2 --top1 0.98"; do
    timeout 25 /tmp/radbundle/bin/rad-golden $f $how > /tmp/g.log 2>&1; rc=$?
    echo "$(basename $f) [${how:0:22}] rc=$rc: $(grep -E '^FAIL' /tmp/g.log | head -3 | cut -c1-220 | tr '\n' ' ') $(grep -E 'passed,' /tmp/g.log) $(grep -oE 'rel_err=[0-9.e-]+' /tmp/g.log | sort -t= -k2 -g | tail -1)"
  done
done
rm -rf $OUT/golden
echo "##### kb V2=1"; RADIANCE_GPU_MOE_V2=1 KB_OPS=moe_mlp timeout 80 bash $D kb
echo "##### kb V2=0"; RADIANCE_GPU_MOE_V2=0 KB_OPS=moe_route,moe_mlp,softcap,rope timeout 70 bash $D kb
echo "##### golden"; timeout 70 bash $D golden
