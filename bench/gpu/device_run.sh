#!/usr/bin/env bash
# device_run.sh STAGE... — what one call on the GPU machine runs (scripts/device-bundle.sh first,
# carry .devcarry). Stages:
#   golden   rad-golden on every fixture with the plan on the card (bf16 KV, tol 2e-2, top-1 98%)
#   make8b   the random Llama-3.1-8B-shaped checkpoint (tools/golden/make_random_llama.py) + .rad
#   bench    rad-enginebench on it (prefill 512/4096, decode at 1/64/256 concurrent)
#   hf       transformers on the same checkpoint (bench/gpu/hf_bench.py)
#   kbench   rad-kbench on the 8B shapes (libgpu and libcpu against libref, speed column)
#   ncu      per-kernel times of decode steps through Nsight Compute
#   copybw   the card's device-to-device copy bandwidth (the decode roofline's denominator)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
root=$(cd "$(dirname "$0")/../.." && pwd)
B=/tmp/radbundle
OUTD=${OUT:-/tmp/out}
mkdir -p "$B" "$OUTD"
[[ -x $B/bin/rad-golden ]] || tar -C "$B" -xJf "$root/.devcarry/bundle.tar.xz"
cuda_lib=/usr/local/cuda/lib64
if ! ls $cuda_lib/libcublasLt.so.13 >/dev/null 2>&1; then
  cuda_lib=$(dirname "$(find / -name 'libcublasLt.so.13' 2>/dev/null | head -1)")
fi
export LD_LIBRARY_PATH=$B/lib:$cuda_lib:${LD_LIBRARY_PATH:-}
export RADIANCE_HOME=$B/share/radiance
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
ldd "$B/share/radiance/kernels/libgpu.so" | grep -i "not found" && echo "libgpu has unresolved libraries"
M8=/tmp/llama8b
for stage in "$@"; do
  echo "=== $stage $(date -u +%FT%TZ)"
  case $stage in
  golden)
    for f in "$B"/fixtures/* "$root"/tests/golden/fixtures/*; do
      [[ -f $f/golden.safetensors ]] || continue
      "$B/bin/rad-golden" "$f" --in-process --placement device --tol 2e-2 --top1 0.98 2>&1 | grep -E "FAIL|rel_err|passed" | sed "s|^|$(basename "$f"): |" | awk '/FAIL|passed/ || NR % 6 == 1'
    done 2>&1 | tee "$OUTD/golden.log" ;;
  make8b)
    python3 "$root/tools/golden/make_random_llama.py" $M8 && cp "$root"/bench/gpu/llama3-tokenizer/* $M8/ 2>/dev/null
    "$B/bin/rad-convert" $M8 -o $M8.rad 2>&1 | tail -2 ;;
  bench)
    "$B/bin/rad-enginebench" $M8.rad --placement device --prefill 512,4096 --decode 1,64,256 --in 128 --out 128 2>&1 |
      grep -v "^\[info\]" | tee "$OUTD/enginebench.log" ;;
  hf)
    python3 "$root/bench/gpu/hf_bench.py" $M8 2>&1 | grep -v Warning | tee "$OUTD/hf.log" ;;
  profile)  # RADIANCE_PROFILE_OPS tables: one prefill of 4096, then decode at 256 and at 1 (no graphs)
    for args in "--prefill 4096 --decode ''" "--prefill '' --decode 256 --out 16" "--prefill '' --decode 1 --out 32"; do
      echo "--- $args"
      eval RADIANCE_PROFILE_OPS=1 "$B/bin/rad-enginebench" $M8.rad --placement device --in 128 $args 2>&1 | grep -v "^\[info\]"
    done ;;
  tp2)  # two ranks, one card each, summing through host staging (needs nvidia-h200-x2)
    for f in "$root"/tests/golden/fixtures/mistral_w16_mha "$B"/fixtures/llama "$B"/fixtures/qwen3; do
      "$B/bin/rad-golden" "$f" --tp 2 --placement device --tol 2e-2 --top1 0.98 2>&1 | grep -E "FAIL|passed" | sed "s|^|tp2 $(basename "$f"): |"
    done ;;
  kbench)  # every op case on Llama-3.1-8B shapes: libgpu (and libcpu) against libref, with speed
    "$B/bin/rad-kbench" --shape llama3.1-8b --bench --report "$OUTD/kbench.md" 2>&1 | grep -v "^\[info\]" | tee "$OUTD/kbench.log" ;;
  ncu)  # per-kernel times of decode steps (batch 1, no graphs), where the card's runtime allows ncu
    ncu --clock-control none --launch-skip 1400 --launch-count 470 --csv --metrics gpu__time_duration.sum \
      "$B/bin/rad-enginebench" $M8.rad --placement device --prefill "" --decode 1 --in 128 --out 6 --no-graphs \
      > "$OUTD/ncu.csv" 2> "$OUTD/ncu.err" || tail -5 "$OUTD/ncu.err"
    python3 "$root/bench/gpu/ncu_summary.py" "$OUTD/ncu.csv" ;;
  copybw)
    python3 -c "
import torch,time
a=torch.empty(2**31,dtype=torch.uint8,device='cuda');b=torch.empty_like(a)
for _ in range(3): b.copy_(a)
torch.cuda.synchronize();t=time.perf_counter()
for _ in range(20): b.copy_(a)
torch.cuda.synchronize();s=(time.perf_counter()-t)/20
print(f'copy bandwidth {2*a.numel()/s/1e12:.2f} TB/s (read+write, 2 GiB)')" ;;
  esac
done
