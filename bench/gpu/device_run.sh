#!/usr/bin/env bash
# device_run.sh STAGE... — what one call on the GPU machine runs (scripts/device-bundle.sh first,
# carry .devcarry). Stages:
#   golden   rad-golden on every fixture with the plan on the card (bf16 KV, tol 2e-2, top-1 98%): prompt and
#            teacher-forced decode logits, free-running greedy pipelined on the card
#   makegolden tools/golden/make_golden.py for the cases of GOLDEN_CASES (names of its CASES) into $OUT/golden
#            (commit them under tests/golden/fixtures)
#   shapebench rad-enginebench on bench/gpu/configs shapes (SHAPES, default gemma-2-9b phi-3-medium), random weights
#   moebench rad-enginebench on Qwen3-30B-A3B's shape (bench/gpu/configs/qwen3-30b-a3b.json, MOE_LAYERS layers,
#            default 12 of 48, weights drawn by rad-convert --random-weights; MOE_IN_MEMORY=1 draws them in
#            rad-enginebench's memory instead, for all 48 layers): prefill 512, decode 1 / 64
#   quantprep the rand8b weights through rad-convert --recipe int8 / int4 / fp8 (QUANT_RECIPES), in the background
#   quant8b  waits for quantprep, then rad-enginebench on each beside bf16
#   kquants  GGUF K-quant fixtures by llama.cpp's converter and llama-quantize (after peers-build) into $OUT/kquant
#   moecut   a random Qwen3-30B-A3B-shaped HF checkpoint cut to MOE_LAYERS (default 8) layers
#            (tools/golden/make_random_moe.py) in /tmp/moecut, its .rad and its bf16 GGUF (llama.cpp's converter)
#   moepeers llama.cpp's CUDA build (peers-build first) then rad-enginebench on the moecut weights: pp512/4096,
#            tg128, 128 in / 128 out at 1, 64, 256 sequences; MOEPEERS summary lines
#   moecpu   the 16-core host on the moecut weights: llama.cpp's CPU build against rad-enginebench --placement host
#            (pp512, tg128), two pairs back to back
#   make8b   the random Llama-3.1-8B-shaped checkpoint (tools/golden/make_random_llama.py) + .rad
#   rand8b   only the .rad, its weights drawn by rad-convert --random-weights (for radiance-only calls)
#   bench    rad-enginebench on it (prefill 512/4096, decode at 1/64/256 concurrent)
#   hf       transformers on the same checkpoint (bench/gpu/hf_bench.py)
#   hfcompile transformers' batch-1 decode with a static cache and torch.compile (hf_bench.py --static-compile)
#   kbench   rad-kbench on the 8B shapes (libgpu and libcpu against libref, speed column)
#   ncu      per-kernel times of decode steps through Nsight Compute
#   timeline what each kernel adds to a recorded decode step at batch 1 and 64 (RADIANCE_GPU_TIMELINE stamps)
#   copybw   the card's device-to-device copy bandwidth (the decode roofline's denominator)
#   golden8b transformers' float32 reference for the 8B checkpoint (tools/golden/golden_for_checkpoint.py),
#            then rad-golden --model on it: one card, and two ranks on two cards when there are two
#   coll     rad-collbench: host staging, and every device row (peer memory, NCCL, staging) on 2 cards
#   tp8b     rad-enginebench on the 8B: TP=1 vs TP=2 (two cards), prefill 512 and decode at 1 / 64
#   http     radiance serve --placement device on the 8B and tools/radbench at 1 / 64 / 256 clients, after the
#            engine's decode step at 64 / 256 rows; HTTP_LOCKSTEP=1 also with --disable-overlap-schedule
#   long     1k in / 1k out at 64 / 256 sequences: radiance, and llama.cpp where peers-build and gguf8b ran
#   prof     per-op times of decode-dominated runs, and the split-count A/B (RADIANCE_GPU_ATTN_MIN_SPLITS) at 64 / 256 rows
#   decodeab kbench's decode-path rows, then decode with an A/B switch (DECODE_AB, values DECODE_AB_VALUES)
#   cpu16ab  libcpu's decode on the 16-core host per ISA level, spin time and thread count
#   httpab   the HTTP stage at 64 / 256 clients under each --max-batch-tokens of HTTP_TOKENS (the step's token budget)
#   cpu16env llama.cpp's tg128 and libcpu's under each setting of CPU_AB_SET, interleaved (CPU_AB_ROUNDS)
#   ncuflash Nsight Compute on one prefill attention kernel (4,096 tokens, a 2-layer 8B-shaped model):
#            duration, pipe use and the warps' stall reasons
#   kb       rad-kbench on the 8B shapes (KB_SHAPE=small: the small ones), only the ops of KB_OPS (default gemm,attention), with speed
#   trace    CUPTI kernel timeline of recorded decode steps (tools/rad-cudatrace, CUDA_INJECTION64_PATH),
#            each run of TRACE_ARGS (arguments joined by ':') summarised by bench/gpu/trace_summary.py
#   planab   batch-1 decode under plans of other sizes (PLANAB_ARGS: plans, each one's arguments joined by ':')
#   bundleab rad-enginebench with .devcarry/base-bundle.tar.xz (a whole build of the base tree) against this bundle,
#            interleaved (BUNDLEAB_ARGS, BUNDLEAB_ROUNDS): the same-call check of a refactor of the engine or worker;
#            BUNDLEAB_TRACE=1 adds a CUPTI timeline of each at batch 1, compared per kernel kind
#   fp8kv    the fp8 KV cache on the card: rad-kbench's attention rows, then greedy tokens against libref on the host
#   kv8b     the 8B (after rand8b) under each KV cache dtype of KV8B_DTYPES (bf16 fp8)
#   basehome /tmp/radbase/share/radiance: the bundle's plugins with .devcarry/base/*.so (built from the
#            base tree) in their place, for envab settings RADIANCE_HOME=/tmp/radbase/share/radiance
#   phases   a measuring libgpu (.devcarry/phases/libgpu.so, built with -DRADIANCE_GPU_PHASES=ON): clock
#            stamps inside the decode chain's kernels per run of PHASES_ARGS, bench/gpu/phase_summary.py
#   pipecheck pipelined decode (the default on a card) and --lockstep pick the same tokens (1 and 4 rows)
#   envab    rad-enginebench AB_ARGS under each environment setting of AB_SET ("VAR=a VAR=b ...";
#            "args:--flag:value" adds arguments instead),
#            the whole list AB_ROUNDS times (default 2) so that pairs sit next to each other in time
# llama.cpp side by side (bench/peers/; .devcarry/llamacpp.tar.xz and tokenizers.tar.xz come from
# bench/peers/llamacpp-pack.sh):
#   peers-build   starts bench/peers/llamacpp-build.sh detached (CPU tree, then CUDA sm_90a; several
#                 minutes) and returns at once; flags /tmp/llamacpp-{cpu,cuda}.{done,failed}
#   peers-status  the builds' flags and progress; peers-wait: waits for the CUDA build (PEERS_WAIT_S)
#   gguf8b        /tmp/llama8b -> /tmp/llama8b-bf16.gguf (llama.cpp's convert_hf_to_gguf.py, bf16;
#                 else tools/gguf/export_gguf.py)
#   peers-gpu     waits for the CUDA build (PEERS_WAIT_S, 360), then llama-bench (pp512/4096, tg128)
#                 and llama-batched-bench (128 in / 128 out at 1, 64, 256) on that GGUF
#   cpu16-prep    the random CPU16_MODELS checkpoints (default llama3.2-1b; also qwen2.5-0.5b), .rad, GGUF
#   cpu16         cpu16-prep, waits for the CPU build, pauses a running build, then llama-bench (CPU
#                 build, -t 16) and rad-enginebench --placement host (RADIANCE_THREADS=16), pp512 and
#                 tg128, two pairs back to back; CPU16 summary lines
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
# libgpu links NCCL (libnccl.so.2), which the bundle leaves to the machine: CUDA's or PyTorch's copy
nccl_lib=$cuda_lib
if ! ls $nccl_lib/libnccl.so.2 >/dev/null 2>&1; then
  nccl_lib=$(dirname "$(find / -name 'libnccl.so.2' -not -path '/proc/*' 2>/dev/null | head -1)")
fi
export LD_LIBRARY_PATH=$B/lib:$cuda_lib:$nccl_lib:${LD_LIBRARY_PATH:-}
export RADIANCE_HOME=$B/share/radiance
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
ldd "$B/share/radiance/kernels/libgpu.so" | grep -i "not found" && echo "libgpu has unresolved libraries"
M8=${M8:-/tmp/llama8b}  # M8=/tmp/other with RAND_LAYERS=N: a shorter stack for rand8b and what follows
eb8b() { "$B/bin/rad-enginebench" $M8.rad --placement device "$@"; }  # rad-enginebench on the 8B container, on the card

# home_with DIR SRC: DIR/share/radiance, the bundle's plugins with SRC/*.so (another build of them) in their place
home_with() {
  rm -rf "$1" && mkdir -p "$1" && cp -r "$B/share" "$1/"
  for f in "$2"/*.so; do
    [[ -f $f ]] || continue
    dst=$(find "$1/share/radiance" -name "$(basename "$f")" | head -1)
    [[ -n $dst ]] && cp "$f" "$dst" && echo "$1: $(basename "$f") from $2"
  done
}

# --- llama.cpp side by side: helpers of the peers-*, gguf8b and cpu16* stages ---------------------
RADTOK=/tmp/radtok LCPID=/tmp/llamacpp-build.pid
# llama.cpp and its converter run without the bundle's lib/ (its Debian libssl, libz, ... are ours)
peers_tokenizers() {  # .devcarry/tokenizers.tar.xz -> /tmp/radtok/{llama3,qwen3}
  [[ -f $RADTOK/llama3/tokenizer.json ]] && return 0
  mkdir -p $RADTOK && tar -C $RADTOK -xJf "$root/.devcarry/tokenizers.tar.xz" ||
    echo "peers: no .devcarry/tokenizers.tar.xz (bench/peers/llamacpp-pack.sh makes it)"
}
peers_pyconv() {  # llama.cpp's HF converter, unpacked apart from the build's /tmp/llamacpp-src
  [[ -f /tmp/llamacpp-py/convert_hf_to_gguf.py ]] && return 0
  mkdir -p /tmp/llamacpp-py && tar -C /tmp/llamacpp-py -xJf "$root/.devcarry/llamacpp.tar.xz" \
    ./convert_hf_to_gguf.py ./conversion ./gguf-py ./LLAMACPP_COMMIT
}
peers_running() { [[ -f $LCPID ]] && kill -0 "$(cut -d' ' -f1 $LCPID)" 2>/dev/null; }
peers_session_pids() {  # every process of the build's session (ninja gives compilers groups of their own)
  local sid f st s
  sid=$(cut -d' ' -f2 $LCPID 2>/dev/null) || return 0
  [[ -n $sid ]] || return 0
  for f in /proc/[0-9]*/stat; do
    read -r st 2>/dev/null < "$f" || continue
    st=${st##*) }
    read -r _ _ _ s _ <<< "$st"
    [[ $s == "$sid" ]] && { f=${f#/proc/}; echo "${f%/stat}"; }
  done
}
peers_pause() {  # SIGSTOP a running build so that a CPU measurement has the cores to itself
  peers_running || return 0
  local p n=0 st mine
  read -r st < /proc/$BASHPID/stat
  st=${st##*) }
  read -r _ _ _ mine _ <<< "$st"
  if [[ $mine == "$(cut -d' ' -f2 $LCPID)" ]]; then  # never stop ourselves (a build not started by setsid)
    echo "peers: WARNING: the llama.cpp build shares this shell's session; not paused, CPU numbers are contended"
    return 0
  fi
  for _ in 1 2; do  # the second pass catches what was spawned while the first one ran
    for p in $(peers_session_pids); do kill -STOP "$p" 2>/dev/null && n=$((n + 1)); done
  done
  touch /tmp/llamacpp-build.paused
  echo "peers: llama.cpp build paused (SIGSTOP to its session's processes, $n signals) while measuring"
}
peers_resume() {
  [[ -f /tmp/llamacpp-build.paused ]] || return 0
  rm -f /tmp/llamacpp-build.paused
  local p
  for p in $(peers_session_pids); do kill -CONT "$p" 2>/dev/null; done
  echo "peers: llama.cpp build resumed"
}
# A measurement that needs the cores (or the host thread launching steps) to itself: the build
# stays stopped until quiet_end, and a TERM or INT meanwhile resumes it before exiting.
quiet_begin() { trap 'peers_resume; exit 143' TERM INT; peers_pause; }
quiet_end() { peers_resume; trap - TERM INT; }
trap peers_resume EXIT
peers_resume  # a build left stopped by a call that was killed mid-measurement
peers_progress() {  # the build's last progress mark and last message
  echo "$(grep -oE '^\[ *[0-9]+(/[0-9]+|%)\]' /tmp/llamacpp-build.log 2>/dev/null | tail -1) $(grep '^llamacpp-build' /tmp/llamacpp-build.log 2>/dev/null | tail -1)"
}
peers_wait() {  # peers_wait cpu|cuda SECONDS: 0 once /tmp/llamacpp-TREE.done exists; 1 on .failed or time out
  local tree=$1 max=$2 t0=$SECONDS next=0
  peers_resume
  while [[ ! -f /tmp/llamacpp-$tree.done ]]; do
    if [[ -f /tmp/llamacpp-$tree.failed ]]; then
      echo "peers: llama.cpp $tree build FAILED ($(cat /tmp/llamacpp-$tree.failed)); end of /tmp/llamacpp-build.log:"
      grep -v '^\[' /tmp/llamacpp-build.log | tail -25 | sed 's/^/  /'
      return 1
    fi
    if ! peers_running; then
      echo "peers: no llama.cpp build running and no /tmp/llamacpp-$tree.done: run the peers-build stage"
      return 1
    fi
    if (( SECONDS - t0 >= max )); then
      echo "peers: gave up waiting for the llama.cpp $tree build after $max s: $(peers_progress)"
      return 1
    fi
    if (( SECONDS - t0 >= next )); then
      echo "peers: waiting for the llama.cpp $tree build, $((SECONDS - t0)) s: $(peers_progress)"
      next=$((next + 30))
    fi
    sleep 5
  done
  echo "peers: llama.cpp $tree build ready after $((SECONDS - t0)) s of waiting ($(cat /tmp/llamacpp-$tree.done | cut -c1-9))"
}
to_gguf() {  # to_gguf HF_DIR OUT.gguf: llama.cpp's convert_hf_to_gguf.py --outtype bf16, else ours
  local src=$1 out=$2 t0=$SECONDS need avail rc
  if [[ -s $out && $out -nt $src/config.json ]]; then
    echo "gguf: $out exists ($(du -h "$out" | cut -f1))"
    return 0
  fi
  rm -f "$out"
  need=$(du -sb "$src" | cut -f1)
  avail=$(df -B1 --output=avail "$(dirname "$out")" | tail -1)
  if (( avail < need + (2 << 30) )); then
    echo "gguf: FAILED: $out needs about $((need >> 30)) GiB, $((avail >> 30)) GiB free on $(dirname "$out")"
    return 1
  fi
  peers_pyconv
  LD_LIBRARY_PATH=$cuda_lib PYTHONPATH=/tmp/llamacpp-py/gguf-py timeout "${GGUF_TIMEOUT_S:-420}" python3 /tmp/llamacpp-py/convert_hf_to_gguf.py \
    "$src" --outtype bf16 --outfile "$out" > "$out.log" 2>&1
  rc=$?
  if (( rc == 0 )) && [[ -s $out ]]; then
    echo "gguf: $out by llama.cpp's convert_hf_to_gguf.py ($(cut -c1-9 /tmp/llamacpp-py/LLAMACPP_COMMIT)) in $((SECONDS - t0)) s, $(du -h "$out" | cut -f1)"
    return 0
  fi
  echo "gguf: llama.cpp's converter failed (rc $rc) after $((SECONDS - t0)) s; end of $out.log:"
  grep -v '^INFO' "$out.log" | tail -8 | sed 's/^/  /'
  rm -f "$out"
  (( rc == 124 )) && return 1  # timed out: the fallback would not finish in the call either
  t0=$SECONDS
  if timeout "${GGUF_TIMEOUT_S:-420}" python3 "$root/tools/gguf/export_gguf.py" "$src" "$out" >> "$out.log" 2>&1 && [[ -s $out ]]; then
    echo "gguf: $out by radiance's tools/gguf/export_gguf.py (fallback) in $((SECONDS - t0)) s, $(du -h "$out" | cut -f1)"
  else
    echo "gguf: FAILED: both converters; end of $out.log:"
    tail -5 "$out.log" | sed 's/^/  /'
    rm -f "$out"
    return 1
  fi
}
cpu16_prep() {  # cpu16_prep SHAPE: /tmp/cpu16-SHAPE (random bf16 HF checkpoint), .rad, -bf16.gguf
  local m=$1 d=/tmp/cpu16-$1 tok t0=$SECONDS
  case $m in llama*) tok=llama3 ;; qwen*) tok=qwen3 ;; *) echo "cpu16: unknown shape $m"; return 1 ;; esac
  if [[ ! -s $d/model.safetensors || ! -f $d/config.json || ! -f $d/tokenizer.json ]]; then
    python3 "$root/tools/golden/make_random_hf.py" "$d" --shape "$m" --tokenizer "$RADTOK/$tok" | tail -1
    echo "cpu16 $m: random checkpoint in $((SECONDS - t0)) s"
  fi
  if [[ ! -s $d.rad || $d.rad -ot $d/config.json ]]; then
    t0=$SECONDS
    "$B/bin/rad-convert" "$d" -o "$d.rad" 2>&1 | tail -1
    echo "cpu16 $m: rad-convert in $((SECONDS - t0)) s"
  fi
  to_gguf "$d" "$d-bf16.gguf"
}
cpu16_pair() {  # cpu16_pair SHAPE PAIR: llama-bench (CPU build) then rad-enginebench (host), same lengths
  local m=$1 p=$2 d=/tmp/cpu16-$1 T=${CPU16_THREADS:-16} lc rad lc_pp lc_tg rad_pp rad_tg
  lc=$(LD_LIBRARY_PATH=$cuda_lib timeout 300 /tmp/llamacpp-cpu/bin/llama-bench -m "$d-bf16.gguf" -t "$T" -p 512 -n 128 -r 3 -o md 2>&1 |
    grep -E '^\||error|failed|^build:')
  sed "s/^/cpu16 $m llamacpp pair$p: /" <<< "$lc"
  rad=$(RADIANCE_THREADS=$T timeout 300 "$B/bin/rad-enginebench" "$d.rad" --placement host --prefill 512 --decode 1 \
    --in 16 --out 128 2>&1 | grep -v '^\[info\]')
  sed "s/^/cpu16 $m radiance pair$p: /" <<< "$rad"
  lc_pp=$(awk -F'|' 'NF > 3 && $(NF-2) ~ /pp512/ {split($(NF-1), a, " "); print a[1]}' <<< "$lc")
  lc_tg=$(awk -F'|' 'NF > 3 && $(NF-2) ~ /tg128/ {split($(NF-1), a, " "); print a[1]}' <<< "$lc")
  rad_pp=$(awk '$1 == "prefill" && $2 == 512 {print $4}' <<< "$rad")
  rad_tg=$(awk '$1 == "decode" && $2 == 1 {print $4}' <<< "$rad")
  awk -v m="$m" -v p="$p" -v t="$T" -v a="${rad_pp:-nan}" -v b="${lc_pp:-nan}" -v c="${rad_tg:-nan}" -v e="${lc_tg:-nan}" 'BEGIN {
    r1 = (b + 0 > 0 && a + 0 > 0) ? sprintf("%.2f", a / b) : "n/a"; r2 = (e + 0 > 0 && c + 0 > 0) ? sprintf("%.2f", c / e) : "n/a"
    printf "CPU16 model=%s pair=%s threads=%s pp512 radiance=%s llamacpp=%s ratio=%s tg128 radiance=%s llamacpp=%s ratio=%s\n", m, p, t, a, b, r1, c, e, r2 }'
}
peers_gpu_bench() {  # peers_gpu_bench [GGUF]: llama.cpp's CUDA build on GGUF (default /tmp/llama8b-bf16.gguf)
  local L=/tmp/llamacpp-cuda/bin G=${1:-/tmp/llama8b-bf16.gguf} out
  [[ -s $G ]] || { echo "peers-gpu: no $G (run make8b and gguf8b, or moecut, first)"; return 1; }
  echo "peers-gpu: llama.cpp $(cut -c1-9 /tmp/llamacpp-src/LLAMACPP_COMMIT 2>/dev/null) CUDA build, $G ($(du -h $G | cut -f1))"
  out=$(LD_LIBRARY_PATH=$cuda_lib timeout 240 "$L/llama-bench" -m $G -ngl 99 -fa 1 -p 512,4096 -n 128 -r 3 -o md 2>&1 | grep -E '^\||error|failed|^build:')
  sed 's/^/llamacpp-gpu bench: /' <<< "$out"
  awk -F'|' 'NF > 3 && $(NF-2) ~ /(pp|tg)[0-9]+/ {t = $(NF-2); gsub(/ /, "", t); split($(NF-1), a, " "); print "LLAMACPP_GPU bench test=" t " ub=512 tok/s=" a[1] " sd=" a[3]}' <<< "$out"
  # the same prompts with llama.cpp's larger micro-batch (its best prefill setting), for reference
  out=$(LD_LIBRARY_PATH=$cuda_lib timeout 120 "$L/llama-bench" -m $G -ngl 99 -fa 1 -p 512,4096 -n 0 -b 4096 -ub 2048 -r 3 -o md 2>&1 | grep -E '^\||error|failed')
  sed 's/^/llamacpp-gpu bench ub2048: /' <<< "$out"
  awk -F'|' 'NF > 3 && $(NF-2) ~ /pp[0-9]+/ {t = $(NF-2); gsub(/ /, "", t); split($(NF-1), a, " "); print "LLAMACPP_GPU bench test=" t " ub=2048 tok/s=" a[1] " sd=" a[3]}' <<< "$out"
  # 128 in / 128 out per sequence, each its own prompt; KV of pl*(pp+tg) cells (-c 81920: 320 a
  # sequence, above the 256 needed, since the cache is split per sequence, 256 of them at most)
  out=$(LD_LIBRARY_PATH=$cuda_lib timeout 240 "$L/llama-batched-bench" -m $G -ngl 99 -fa on -c 81920 -b 2048 -ub 512 -npp 128 -ntg 128 \
    -npl 1,64,256 2>&1 | grep -E '^\||n_kv_max|error|failed')
  sed 's/^/llamacpp-gpu batched: /' <<< "$out"
  awk -F'|' 'NF > 11 && $2 ~ /^ *[0-9]+ *$/ {for (i = 2; i <= 11; i++) gsub(/ /, "", $i)
    print "LLAMACPP_GPU batched pp=" $2 " tg=" $3 " npl=" $4 " S_PP=" $7 " S_TG=" $9 " S=" $11 " T_TG=" $8}' <<< "$out"
}

for stage in "$@"; do
  echo "=== $stage $(date -u +%FT%TZ)"
  case $stage in
  golden)
    for f in "$B"/fixtures/* "$root"/tests/golden/fixtures/*; do
      [[ -f $f/golden.safetensors ]] || continue
      # every line to the log; on screen the failures, the near-ties, the largest logit error and the verdict
      "$B/bin/rad-golden" "$f" --in-process --placement device --tol 2e-2 --top1 0.98 > "/tmp/golden-$(basename "$f").log" 2>&1
      { grep -E "^FAIL|near-tie|agreement|passed" "/tmp/golden-$(basename "$f").log" | grep -v "^PASS .*top-1 [0-9]*/[0-9]*, the rest" | head -8
        grep -oE "rel_err=[0-9.e-]+" "/tmp/golden-$(basename "$f").log" | sort -t= -k2 -g | tail -1 | sed 's/^/largest /'; } |
        sed "s|^|$(basename "$f"): |"
    done 2>&1 | tee "$OUTD/golden.log" ;;
  makegolden)
    (cd "$root/tools/golden" && python3 make_golden.py "$OUTD/golden" ${GOLDEN_CASES:?names of make_golden.py cases}) 2>&1 |
      grep -v Warning | tail -20 | tee "$OUTD/makegolden.log" ;;
  moebench)
    d=/tmp/a3b; mkdir -p $d
    python3 -c "import json,sys; c=json.load(open(sys.argv[1])); c['num_hidden_layers']=int(sys.argv[2]); json.dump(c,open(sys.argv[3],'w'))" \
      "$root/bench/gpu/configs/qwen3-30b-a3b.json" "${MOE_LAYERS:-12}" $d/config.json
    # MOE_IN_MEMORY=1: the weights drawn in rad-enginebench's memory, no container on disk (all 48 layers: 61 GB)
    m=$d.rad
    if [[ ${MOE_IN_MEMORY:-0} == 1 ]]; then m=$d; else
      [[ -f $d.rad ]] || LD_LIBRARY_PATH=$B/lib:$cuda_lib RADIANCE_HOME=$B/share/radiance "$B/bin/rad-convert" $d -o $d.rad --random-weights 1 2>&1 | tail -1
    fi
    LD_LIBRARY_PATH=$B/lib:$cuda_lib:$nccl_lib RADIANCE_HOME=$B/share/radiance "$B/bin/rad-enginebench" $m --placement device \
      ${MOEBENCH_ARGS:---prefill 512 --decode 1,64 --in 128 --out 128} 2>&1 | grep -E "^(decode|prefill|model|case|drew)" | tee -a "$OUTD/moebench.log" ;;
  shapebench)  # rad-enginebench on the shapes of SHAPES (bench/gpu/configs/NAME.json, default gemma-2-9b phi-3-medium): random bf16 weights drawn by rad-convert from the config alone, each container removed after its run (disk)
    for shape in ${SHAPES:-gemma-2-9b phi-3-medium}; do
      d=/tmp/shape-$shape; mkdir -p $d && cp "$root/bench/gpu/configs/$shape.json" $d/config.json
      t0=$SECONDS
      LD_LIBRARY_PATH=$B/lib:$cuda_lib RADIANCE_HOME=$B/share/radiance "$B/bin/rad-convert" $d -o $d.rad --random-weights 1 2>&1 | tail -1
      echo "shapebench $shape: drawn in $((SECONDS - t0)) s, $(du -h $d.rad | cut -f1)"
      LD_LIBRARY_PATH=$B/lib:$cuda_lib:$nccl_lib RADIANCE_HOME=$B/share/radiance "$B/bin/rad-enginebench" $d.rad --placement device \
        ${SHAPEBENCH_ARGS:---prefill 512 --decode 1,64 --in 128 --out 128} 2>&1 | grep -E "^(decode|prefill|model|case)" |
        sed "s/^/shapebench $shape: /" | tee -a "$OUTD/shapebench.log"
      rm -f $d.rad
    done ;;
  quantprep)  # starts rad-convert --recipe R of the rand8b weights for each R of QUANT_RECIPES (default int8 int4 fp8), all at once in the background
    for r in ${QUANT_RECIPES:-int8 int4 fp8}; do
      [[ -s $M8-$r.rad ]] && continue
      ( t0=$SECONDS; "$B/bin/rad-convert" $M8 -o $M8-$r.tmp.rad --random-weights 0 --recipe "$r" > /tmp/quantprep-$r.log 2>&1 &&
        mv $M8-$r.tmp.rad $M8-$r.rad; echo "quantprep: $r $? in $((SECONDS - t0)) s" >> /tmp/quantprep-$r.log ) &
    done
    echo "quantprep: started" ;;
  quant8b)  # waits for quantprep's containers, then rad-enginebench on bf16 and each (QUANT_ARGS)
    for r in ${QUANT_RECIPES:-int8 int4 fp8}; do
      while [[ ! -s $M8-$r.rad ]] && ! grep -q "^quantprep: $r" /tmp/quantprep-$r.log 2>/dev/null; do sleep 2; done
      tail -2 /tmp/quantprep-$r.log 2>/dev/null | sed "s/^/quant8b $r: /"
    done
    quiet_begin
    for r in bf16 ${QUANT_RECIPES:-int8 int4 fp8}; do
      f=$M8.rad
      [[ $r != bf16 ]] && f=$M8-$r.rad
      echo "--- $r"
      # shellcheck disable=SC2086
      "$B/bin/rad-enginebench" "$f" --placement device ${QUANT_ARGS:---prefill 512,4096 --decode 1,64,256 --in 128 --out 128} 2>&1 |
        grep -v "^\[info\]" | sed "s/^/quant8b $r: /"
    done 2>&1 | tee -a "$OUTD/quant8b.log"
    # QUANT_AB_HOME: batch-1 decode of each recipe under that RADIANCE_HOME (another build's plugins) and this one's, interleaved
    if [[ -n ${QUANT_AB_HOME:-} ]]; then
      for r in ${QUANT_RECIPES:-int8 int4 fp8}; do
        for h in "$QUANT_AB_HOME" "$RADIANCE_HOME"; do
          RADIANCE_HOME=$h "$B/bin/rad-enginebench" $M8-$r.rad --placement device --prefill "" --decode 1 --in 128 --out 128 2>&1 |
            grep -E "^decode" | sed "s|^|quant8b-ab $r $([[ $h == "$RADIANCE_HOME" ]] && echo new || echo other): |"
        done
      done 2>&1 | tee -a "$OUTD/quant8b.log"
    fi
    quiet_end ;;
  kquants)  # GGUF K-quant fixtures written by llama.cpp itself (tools/gguf/make_kquant_fixtures.py) into $OUT/kquant; needs peers-build's CPU tree
    peers_tokenizers
    peers_pyconv
    if peers_wait cpu "${PEERS_WAIT_S:-360}"; then
      python3 "$root/tools/gguf/make_kquant_fixtures.py" "$OUTD/kquant" --tokenizer $RADTOK/llama3 --llamacpp-py /tmp/llamacpp-py \
        --quantize /tmp/llamacpp-cpu/bin/llama-quantize 2>&1 | grep -v Warning | tail -8
    fi ;;
  moecut)
    MC=/tmp/moecut
    peers_tokenizers
    if [[ ! -f $MC/model.safetensors.index.json ]]; then
      t0=$SECONDS
      python3 "$root/tools/golden/make_random_moe.py" "$root/bench/gpu/configs/qwen3-30b-a3b.json" $MC --layers "${MOE_LAYERS:-8}" \
        --tokenizer "$RADTOK/qwen3" 2>&1 | tail -1
      echo "moecut: checkpoint in $((SECONDS - t0)) s, $(du -sh $MC | cut -f1)"
    fi
    if [[ ! -s $MC.rad ]]; then t0=$SECONDS; "$B/bin/rad-convert" $MC -o $MC.rad 2>&1 | tail -1; echo "moecut: rad-convert $((SECONDS - t0)) s"; fi
    to_gguf $MC $MC-bf16.gguf
    df -h /tmp | tail -1 | sed 's/^/moecut: disk /' ;;
  moepeers)
    {
      peers_wait cuda "${PEERS_WAIT_S:-360}" && peers_gpu_bench /tmp/moecut-bf16.gguf
      quiet_begin
      "$B/bin/rad-enginebench" /tmp/moecut.rad --placement device --prefill 512,4096 --decode 1,64,256 --in 128 --out 128 2>&1 |
        grep -E "^(decode|prefill|model)" | sed 's/^/MOEPEERS radiance: /'
      quiet_end
    } 2>&1 | tee "$OUTD/moepeers.log" ;;
  moecpu)
    {
      d=/tmp/moecut T=${CPU16_THREADS:-16}
      if peers_wait cpu "${PEERS_WAIT_S:-360}"; then
        quiet_begin
        for p in 1 2; do
          LD_LIBRARY_PATH=$cuda_lib timeout 300 /tmp/llamacpp-cpu/bin/llama-bench -m $d-bf16.gguf -t "$T" -p 512 -n 128 -r 2 -o md 2>&1 |
            grep -E '^\||error|failed' | sed "s/^/moecpu llamacpp pair$p: /"
          RADIANCE_THREADS=$T timeout 300 "$B/bin/rad-enginebench" $d.rad --placement host --prefill 512 --decode 1 --in 16 --out 128 2>&1 |
            grep -E "^(decode|prefill)" | sed "s/^/moecpu radiance pair$p: /"
        done
        quiet_end
      fi
    } 2>&1 | tee "$OUTD/moecpu.log" ;;
  make8b)
    if [[ -s $M8.rad && -f $M8/model.safetensors ]]; then echo "make8b: $M8.rad exists (a warm machine)"; continue; fi
    python3 "$root/tools/golden/make_random_llama.py" $M8
    peers_tokenizers && cp "$RADTOK"/llama3/* $M8/  # a tokenizer in the container, for serving it
    "$B/bin/rad-convert" $M8 -o $M8.rad 2>&1 | tail -2 ;;
  rand8b)  # the same geometry with weights drawn by rad-convert --random-weights (seconds, not a minute); no HF weights, so not for hf / gguf8b / golden8b
    if [[ -s $M8.rad ]]; then echo "rand8b: $M8.rad exists"; continue; fi
    python3 "$root/tools/golden/make_random_llama.py" $M8 --config-only ${RAND_LAYERS:+--layers $RAND_LAYERS}
    t0=$SECONDS
    "$B/bin/rad-convert" $M8 -o $M8.rad --random-weights 0 2>&1 | tail -2
    echo "rand8b: $((SECONDS - t0)) s" ;;
  bench)
    quiet_begin
    "$B/bin/rad-enginebench" $M8.rad --placement device --prefill 512,4096 --decode 1,64,256 --in 128 --out 128 2>&1 |
      grep -v "^\[info\]" | tee "$OUTD/enginebench.log"
    quiet_end ;;
  hf)
    python3 "$root/bench/gpu/hf_bench.py" $M8 2>&1 | grep -v Warning | tee "$OUTD/hf.log" ;;
  hfcompile)  # transformers' batch-1 decode with a static cache and torch.compile (reduce-overhead), beside sdpa's eager one
    python3 "$root/bench/gpu/hf_bench.py" $M8 --prefill "" --static-compile 2>&1 | grep -v Warning | tail -4 | tee "$OUTD/hfcompile.log" ;;
  timeline)  # RADIANCE_GPU_TIMELINE: what each kernel adds to a recorded decode step (launch gaps included), batch 1 then 64
    quiet_begin
    for args in "--decode 1 --out 64" "--decode 64 --out 32"; do
      echo "--- $args"
      RADIANCE_GPU_TIMELINE=1 "$B/bin/rad-enginebench" $M8.rad --placement device --prefill 16 --in 128 $args 2>&1 |
        grep -E "^(decode|prefill)|\[timeline\]" | head -45
    done 2>&1 | tee -a "$OUTD/timeline.log"
    quiet_end ;;
  profile)  # RADIANCE_PROFILE_OPS tables: one prefill of 4096, then decode at 256 and at 1 (no graphs)
    for args in "--prefill 4096 --decode ''" "--prefill '' --decode 256 --out 16" "--prefill '' --decode 1 --out 32"; do
      echo "--- $args"
      eval RADIANCE_PROFILE_OPS=1 "$B/bin/rad-enginebench" $M8.rad --placement device --in 128 $args 2>&1 | grep -v "^\[info\]"
    done ;;
  prof)  # decode-dominated per-op times at 64 and 256 rows (16-token prompts), and split counts A/B at 64 / 256
    for nb in 64 256; do
      echo "--- profile decode $nb"
      RADIANCE_PROFILE_OPS=1 "$B/bin/rad-enginebench" $M8.rad --placement device --prefill "" --decode $nb --in 16 --out 64 2>&1 | grep -v "^\[info\]"
    done
    for sp in 0 2 4 8; do
      RADIANCE_GPU_ATTN_MIN_SPLITS=$sp "$B/bin/rad-enginebench" $M8.rad --placement device --prefill "" --decode 64,256 --in 128 --out 128 2>&1 |
        grep -E "^decode" | sed "s/^/min_splits=$sp: /"
    done ;;
  tp2)  # two ranks, one card each, summing through host staging (needs nvidia-h200-x2)
    for f in "$root"/tests/golden/fixtures/mistral_w16_mha "$B"/fixtures/llama "$B"/fixtures/qwen3; do
      "$B/bin/rad-golden" "$f" --tp 2 --placement device --tol 2e-2 --top1 0.98 2>&1 | grep -E "FAIL|passed" | sed "s|^|tp2 $(basename "$f"): |"
    done ;;
  kbench)  # every op case on Llama-3.1-8B shapes: libgpu (and libcpu) against libref, with speed
    "$B/bin/rad-kbench" --shape llama3.1-8b --bench --report "$OUTD/kbench.md" 2>&1 | grep -v "^\[info\]" | tee "$OUTD/kbench.log" ;;
  sampling)  # the card's argmax / sample rows against libref on the 8B vocabulary (with speed), then decode drawing on the card vs greedy
    "$B/bin/rad-kbench" --shape llama3.1-8b --ops argmax,sample --bench 2>&1 | grep -v "^\[info\]" | tee "$OUTD/kbench-sampling.log"
    if [[ -s $M8.rad ]]; then
      for s in "" "--sample 0.8,40,0.95,0" "--sample 1,0,0.9,0"; do
        "$B/bin/rad-enginebench" $M8.rad --placement device --prefill "" --decode 1,64,256 --in 128 --out 64 $s 2>&1 |
          grep -E "^(decode|sample)" | sed "s/^/sampling ${s:-greedy}: /"
      done 2>&1 | tee "$OUTD/sampling-decode.log"
    fi ;;
  mixed)  # a server's mixed steps: 64 / 256 sequences decoding while a 64- or 256-token prompt chunk joins each step, then per-op times of the 256+256 mix (no graphs)
    for P in 64 256; do
      "$B/bin/rad-enginebench" $M8.rad --placement device --prefill "" --decode 64,256 --in 128 --out 32 --mixed $P 2>&1 |
        grep -E "^(decode|mixed)" | sed "s/^/mixed P=$P: /"
    done 2>&1 | tee "$OUTD/mixed.log"
    RADIANCE_PROFILE_OPS=1 "$B/bin/rad-enginebench" $M8.rad --placement device --prefill "" --decode 256 --in 128 --out 16 --mixed 256 \
      --no-graphs > "$OUTD/mixed-profile.log" 2>&1
    grep -v "^\[info\]" "$OUTD/mixed-profile.log" | head -30 ;;
  ncuflash)  # where the prefill attention kernel's time goes: one k_flash launch of a 4,096-token prefill
    L2=/tmp/llama8b-2l
    if [[ ! -s $L2.rad ]]; then
      python3 "$root/tools/golden/make_random_llama.py" $L2 --layers 2 > /dev/null 2>&1
      "$B/bin/rad-convert" $L2 -o $L2.rad 2>&1 | tail -1
    fi
    ncu --kernel-name regex:k_flash --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active" \
      "$B/bin/rad-enginebench" $L2.rad --placement device --prefill 4096 --decode , --in 128 --out 8 > "$OUTD/ncuflash.txt" 2>&1
    grep -E "k_flash|Duration|Throughput|Busy|Issue|Occupancy|Registers|stalled|pipe|Warp Cycles" "$OUTD/ncuflash.txt" |
      awk '$NF + 0 > 0.05 || !/stalled/' | head -60 ;;
  ncukb)  # Nsight Compute on the first launch of NCU_KERNEL (a name regex) in rad-kbench's KB_OPS / KB_CASES (KB_HOME as kb's): speed of light, occupancy, stall reasons
    ncu --kernel-name "regex:${NCU_KERNEL:-k_gemv}" --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum.per_second" \
      "$B/bin/rad-kbench" --shape "${KB_SHAPE:-llama3.1-8b}" --kernels libgpu --ops "${KB_OPS:-gemm}" ${KB_CASES:+--cases "$KB_CASES"} \
      ${KB_HOME:+--radiance-home "$KB_HOME"} --bench > "$OUTD/ncukb${KB_LABEL:+-$KB_LABEL}.txt" 2>&1
    grep -E "k_gemv|Duration|Throughput|Issue|Occupancy|Registers|stalled|Block Limit|bytes_read" "$OUTD/ncukb${KB_LABEL:+-$KB_LABEL}.txt" |
      awk '$NF + 0 > 0.05 || !/stalled/' | sed "s|^|ncukb ${KB_LABEL:-}: |" | head -50 ;;
  kb)  # rad-kbench on the 8B shapes for the ops of KB_OPS (and the cases whose label holds KB_CASES), libgpu rows only (KB_HOME: another RADIANCE_HOME, KB_LABEL a prefix for its lines)
    "$B/bin/rad-kbench" --shape "${KB_SHAPE:-llama3.1-8b}" --kernels libgpu --ops "${KB_OPS:-gemm,attention}" ${KB_CASES:+--cases "$KB_CASES"} \
      ${KB_HOME:+--radiance-home "$KB_HOME"} --bench 2>&1 | grep -v "^\[info\]" | grep -v " libcpu " | sed "s|^|${KB_LABEL:+$KB_LABEL: }|" |
      tee -a "$OUTD/kb.log" ;;
  fp8kv)  # the fp8 KV cache on the card: rad-kbench's attention cases (the fp8 ones compare stored codes exactly), then greedy tokens with --kv-cache-dtype fp8 (and bf16) on the card against libref on the host, llama fixture
    "$B/bin/rad-kbench" --shape "${KB_SHAPE:-llama3.1-8b}" --kernels libgpu --ops attention,rope_attention --bench 2>&1 | grep -v "^\[info\]" |
      grep -v " libcpu " | tee -a "$OUTD/fp8kv.log"
    "$B/bin/rad-convert" "$B/fixtures/llama" -o /tmp/llama-fixture.rad 2>&1 | tail -1
    for shape in "--decode 3 --in 12 --out 10" "--decode 2 --in 240 --out 30"; do
      for kv in fp8 bf16; do
        # shellcheck disable=SC2086
        h=$("$B/bin/rad-enginebench" /tmp/llama-fixture.rad --prefill "" --tokens --placement host --kernels libref --kv-cache-dtype $kv $shape 2>&1 | grep '^tokens')
        # shellcheck disable=SC2086
        d=$("$B/bin/rad-enginebench" /tmp/llama-fixture.rad --prefill "" --tokens --placement device --kv-cache-dtype $kv $shape 2>&1 | grep -E '^tokens|rror')
        if [[ -n $h && $h == "$d" ]]; then echo "fp8kv tokens $kv ($shape): the card's = libref's ($(wc -l <<< "$h") streams)"
        else echo "fp8kv tokens $kv ($shape): DIFFER"; diff <(echo "$h") <(echo "$d") | head -6; fi
      done
    done 2>&1 | tee -a "$OUTD/fp8kv.log" ;;
  kv8b)  # the 8B (rand8b first) with each KV cache dtype of KV8B_DTYPES (default bf16 fp8): prefill 512, decode 1 / 64 / 256
    for kv in ${KV8B_DTYPES:-bf16 fp8}; do
      eb8b --kv-cache-dtype "$kv" ${KV8B_ARGS:---prefill 512 --decode 1,64,256 --in 128 --out 128} 2>&1 | grep -E "^(decode|prefill)|rror" | sed "s/^/kv8b $kv: /"
    done 2>&1 | tee -a "$OUTD/kv8b.log" ;;
  basehome)  # /tmp/radbase/share/radiance: the bundle's plugins with .devcarry/base/*.so over them (a build of the base tree), for envab settings RADIANCE_HOME=/tmp/radbase/share/radiance against RADIANCE_HOME=$B/share/radiance; BASE_FROM=.devcarry/other BASE_TO=/tmp/radother for a second variant
    home_with "${BASE_TO:-/tmp/radbase}" "$root/${BASE_FROM:-.devcarry/base}" ;;
  phases)  # a measuring libgpu (.devcarry/phases/libgpu.so, cmake -DRADIANCE_GPU_PHASES=ON): stamps inside the decode chain's kernels, each run of PHASES_ARGS (arguments joined by ':') summarised by bench/gpu/phase_summary.py
    home_with /tmp/radphases "$root/.devcarry/phases"
    i=0
    for run in ${PHASES_ARGS:-"--prefill:16:--decode:1:--out:48"}; do
      i=$((i + 1)); args=${run//:/ }
      echo "--- phases $i: $args"
      RADIANCE_HOME=/tmp/radphases/share/radiance RADIANCE_GPU_PHASES_OUT=$OUTD/phases-$i.txt eb8b $args --in 128 2>&1 | grep -E "^decode|phase"
      python3 "$root/bench/gpu/phase_summary.py" "$OUTD/phases-$i.txt"
      xz -T0 "$OUTD/phases-$i.txt"
    done 2>&1 | tee -a "$OUTD/phases.log" ;;
  pipecheck)  # pipelined decode (the default on a card) and --lockstep pick the same tokens on the 8B
    for m in "" --lockstep; do
      eb8b --prefill "" --decode 1,4 --in 100 --out 40 --tokens 2>&1 | grep '^tokens' > "$OUTD/tokens${m:-pipelined}.txt"
    done
    if [[ -s $OUTD/tokenspipelined.txt ]] && cmp -s "$OUTD/tokenspipelined.txt" "$OUTD/tokens--lockstep.txt"; then
      echo "pipecheck: same tokens ($(wc -l < "$OUTD/tokenspipelined.txt") streams)"
    else
      echo "pipecheck: FAILED, the token streams differ"; diff "$OUTD/tokenspipelined.txt" "$OUTD/tokens--lockstep.txt" | head -6
    fi ;;
  envab)  # A/B switches, interleaved: AB_SET="VAR=0 VAR=1,OTHER=2" (commas join variables of one setting), AB_ARGS (rad-enginebench's), AB_ROUNDS
    quiet_begin  # a llama.cpp build still running would contend for the host thread that launches steps
    for round in $(seq "${AB_ROUNDS:-2}"); do
      for setting in ${AB_SET:?envab needs AB_SET}; do
        extra=()  # a setting "args:--a:b" adds rad-enginebench arguments (--a b) instead of variables
        if [[ $setting == args:* ]]; then a=${setting#args:}; extra=(${a//:/ }); fi
        env $([[ $setting == args:* ]] || echo "${setting//,/ }") "$B/bin/rad-enginebench" $M8.rad --placement device ${AB_ARGS:---prefill 4096 --decode 1 --in 128 --out 64} "${extra[@]}" 2>&1 |
          grep -E "^(decode|prefill|host)" | sed "s|^|round $round $setting: |"
      done
    done 2>&1 | tee -a "$OUTD/envab.log"
    quiet_end ;;
  bundleab)  # a whole other build against this one, interleaved: .devcarry/base-bundle.tar.xz (scripts/device-bundle.sh run in a worktree of the base commit, its bundle renamed) unpacked to /tmp/radbase0, then rad-enginebench BUNDLEAB_ARGS on the 8B with each bundle's binaries, libraries and plugins, BUNDLEAB_ROUNDS times (default 2); for refactors that change the engine and the worker, not only plugins (basehome swaps plugins only)
    [[ -x /tmp/radbase0/bin/rad-enginebench ]] || { mkdir -p /tmp/radbase0 && tar -C /tmp/radbase0 -xJf "$root/.devcarry/base-bundle.tar.xz"; }
    quiet_begin
    for round in $(seq "${BUNDLEAB_ROUNDS:-2}"); do
      for b in /tmp/radbase0 "$B"; do
        LD_LIBRARY_PATH=$b/lib:$cuda_lib:$nccl_lib RADIANCE_HOME=$b/share/radiance "$b/bin/rad-enginebench" $M8.rad --placement device \
          ${BUNDLEAB_ARGS:---prefill 512 --decode 1,64,256 --in 128 --out 128} 2>&1 | grep -E "^(decode|prefill)" |
          sed "s|^|round $round $([[ $b == "$B" ]] && echo new || echo base): |"
      done
    done 2>&1 | tee -a "$OUTD/bundleab.log"
    # BUNDLEAB_TRACE=1: one traced batch-1 decode under each bundle (this bundle's CUPTI injection
    # serves both), compared kernel kind by kernel kind: where a difference between the builds lies
    if [[ ${BUNDLEAB_TRACE:-0} == 1 && -f $B/lib/librad_cudatrace.so ]]; then
      for b in /tmp/radbase0 "$B"; do
        n=$([[ $b == "$B" ]] && echo new || echo base)
        LD_LIBRARY_PATH=$b/lib:$B/lib:$cuda_lib:$nccl_lib RADIANCE_HOME=$b/share/radiance CUDA_INJECTION64_PATH=$B/lib/librad_cudatrace.so \
          RAD_CUDATRACE_OUT=$OUTD/abtrace-$n.csv "$b/bin/rad-enginebench" $M8.rad --placement device --prefill 16 --decode 1 --in 128 --out 48 2>&1 |
          grep -E "^decode|cudatrace" | sed "s/^/traced $n: /"
      done
      python3 "$root/bench/gpu/trace_summary.py" "$OUTD/abtrace-new.csv" --against "$OUTD/abtrace-base.csv"
      xz -T0 "$OUTD"/abtrace-*.csv
    fi 2>&1 | tee -a "$OUTD/bundleab.log"
    quiet_end ;;
  planab)  # batch-1 decode 128 / 128 under plans of other sizes (max_tok from the prefill sizes or --chunk, max_ctx from the prefill sizes, max_seqs from the decode batches), interleaved rounds
    quiet_begin
    for round in 1 2; do
      # PLANAB_ARGS: plans separated by spaces, each plan's arguments joined by ':'
      for plan in ${PLANAB_ARGS:-"--prefill:16:--decode:1 --prefill:4096:--decode:1 --prefill:16:--decode:1,256 --prefill:512,4096:--decode:1,64,256"}; do
        args=${plan//:/ }
        eb8b $args --in 128 --out 128 2>&1 | grep -E "^decode +1 " |
          sed "s/^/round $round plan ($args): /"
      done
    done 2>&1 | tee -a "$OUTD/planab.log"
    quiet_end ;;
  trace)  # CUPTI kernel timeline (librad_cudatrace) of recorded decode steps, summarised: span, idle, host gap, per kernel
    quiet_begin
    i=0
    for run in ${TRACE_ARGS:-"--prefill:16:--decode:1:--out:48"}; do
      i=$((i + 1)); args=${run//:/ }
      echo "--- trace $i: $args"
      eb8b $args --in 128 2>&1 | grep -E "^decode" | sed "s/^/untraced: /"
      CUDA_INJECTION64_PATH=$B/lib/librad_cudatrace.so RAD_CUDATRACE_OUT=$OUTD/trace-$i.csv \
        eb8b $args --in 128 2>&1 | grep -E "^decode|cudatrace" | sed "s/^/traced: /"
      python3 "$root/bench/gpu/trace_summary.py" "$OUTD/trace-$i.csv" --nodes ${TRACE_NODES:-24}
      # whole graph launches only: the step's span and the host gap as an untraced run has them
      RAD_CUDATRACE_GRAPHS=1 CUDA_INJECTION64_PATH=$B/lib/librad_cudatrace.so RAD_CUDATRACE_OUT=$OUTD/graphs-$i.csv \
        eb8b $args --in 128 2>&1 | grep -E "^decode|cudatrace" | sed "s/^/graph-traced: /"
      python3 "$root/bench/gpu/trace_summary.py" "$OUTD/graphs-$i.csv" --nodes 0 | sed -n 1,5p
      xz -T0 "$OUTD/trace-$i.csv" "$OUTD/graphs-$i.csv"
    done 2>&1 | tee -a "$OUTD/trace.log"
    quiet_end ;;
  decodeab)  # batch-1 decode kernels: kbench's gemm / attention / add_rms_norm / argmax rows, then decode with the A/B switch DECODE_AB (a variable name, docs/SETTINGS.md) at each of DECODE_AB_VALUES (default 0 1)
    "$B/bin/rad-kbench" --shape llama3.1-8b --ops gemm,gemm_swiglu,attention,add_rms_norm,argmax --bench 2>&1 | grep -v "^\[info\]" | grep -v " libcpu "
    ab=${DECODE_AB:?decodeab needs DECODE_AB, the switch to compare}
    for v in ${DECODE_AB_VALUES:-0 1}; do
      env "$ab=$v" "$B/bin/rad-enginebench" $M8.rad --placement device --prefill "" --decode 1,64,256 --in 128 --out 128 2>&1 |
        grep -E "^decode" | sed "s/^/$ab=$v: /"
    done 2>&1 | tee "$OUTD/decodeab.log" ;;
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
  golden8b)
    [[ -f $M8/golden.safetensors ]] || python3 "$root/tools/golden/golden_for_checkpoint.py" $M8 2>&1 | grep -v Warning | tail -1
    python3 "$root/tools/golden/golden_for_checkpoint.py" $M8 --bf16-baseline 2>&1 | grep "transformers bf16" | sed 's/^/golden8b: /'
    "$B/bin/rad-golden" $M8 --model $M8.rad --in-process --placement device --tol 2e-2 --top1 0.98 2>&1 | grep -E "FAIL|rel_err|top1|passed" | sed 's/^/golden8b tp1: /'
    if (( $(nvidia-smi -L | wc -l) >= 2 )); then
      "$B/bin/rad-golden" $M8 --model $M8.rad --tp 2 --placement device --tol 2e-2 --top1 0.98 2>&1 | grep -E "FAIL|rel_err|top1|passed" | sed 's/^/golden8b tp2: /'
    fi 2>&1 | tee "$OUTD/golden8b.log" ;;
  coll)
    "$B/bin/rad-collbench" --ranks 2 --reps 20 2>&1 | grep -v "^\[info\]"
    "$B/bin/rad-collbench" --device --ranks 2 --reps 20 2>&1 | grep -v "^\[info\]" | tee "$OUTD/collbench.log" ;;
  tp8b)
    for t in 1 2; do
      "$B/bin/rad-enginebench" $M8.rad --placement device --prefill 512 --decode 1,64 --in 128 --out 64 --tp $t 2>&1 |
        grep -v "^\[info\]" | sed "s/^/tp$t: /"
    done 2>&1 | tee "$OUTD/tp8b.log" ;;
  peers-build)  # detached: outlives this call; run from copies in /tmp (the next call re-lays the tree)
    peers_resume
    if peers_running; then
      echo "peers-build: already running: $(peers_progress)"
    else
      if cp "$root/bench/peers/llamacpp-build.sh" /tmp/llamacpp-build.sh && cp "$root/.devcarry/llamacpp.tar.xz" /tmp/llamacpp.tar.xz; then
        setsid nohup bash /tmp/llamacpp-build.sh /tmp/llamacpp.tar.xz > /dev/null 2>&1 < /dev/null &
        sleep 3
        echo "peers-build: started (log /tmp/llamacpp-build.log): $(peers_progress)"
      else
        echo "peers-build: FAILED: no .devcarry/llamacpp.tar.xz (bench/peers/llamacpp-pack.sh makes it; carry .devcarry)"
      fi
    fi ;;
  peers-wait)  # until the CUDA build is done (PEERS_WAIT_S, 360), printing its progress
    peers_wait cuda "${PEERS_WAIT_S:-360}" ;;
  peers-status)
    for t in cpu cuda; do
      echo "peers-status: $t $(ls /tmp/llamacpp-$t.done /tmp/llamacpp-$t.failed 2>/dev/null | tr '\n' ' ')$(cat /tmp/llamacpp-$t.done /tmp/llamacpp-$t.failed 2>/dev/null | tr '\n' ' ')"
    done
    echo "peers-status: running=$(peers_running && echo yes || echo no) $(peers_progress)"
    grep '^llamacpp-build' /tmp/llamacpp-build.log 2>/dev/null | tail -6 | sed 's/^/  /' ;;
  gguf8b)
    [[ -f $M8/config.json ]] || { echo "gguf8b: no $M8 (run make8b first)"; continue; }
    peers_tokenizers
    [[ -f $M8/tokenizer.json ]] || cp "$RADTOK"/llama3/* $M8/
    df -h /tmp | tail -1 | sed 's/^/gguf8b: disk /'
    to_gguf $M8 /tmp/llama8b-bf16.gguf ;;
  drop8b)  # the HF checkpoint's weights (16 GB) once the .rad and the GGUF exist: the disk is 64 GiB
    [[ -s $M8.rad && -s /tmp/llama8b-bf16.gguf ]] && rm -f $M8/*.safetensors && echo "drop8b: removed $M8/*.safetensors"
    df -h /tmp | tail -1 | sed 's/^/drop8b: disk /' ;;
  peers-gpu)
    { peers_wait cuda "${PEERS_WAIT_S:-360}" && peers_gpu_bench; } 2>&1 | tee "$OUTD/llamacpp-gpu.log" ;;
  long)  # 1k in / 1k out (issue #7's second shape): radiance's lockstep decode at 64 / 256 sequences, then llama.cpp's batched-bench on the same shape where its CUDA build and GGUF exist (peers-build, gguf8b)
    "$B/bin/rad-enginebench" $M8.rad --placement device --prefill "" --decode 64,256 --in 1024 --out 1024 2>&1 |
      grep -E "^decode" | sed 's/^/long radiance: /' | tee "$OUTD/long.log"
    if [[ -x /tmp/llamacpp-cuda/bin/llama-batched-bench && -s /tmp/llama8b-bf16.gguf ]]; then
      # KV for 256 x 2,048 cells split per sequence (2,112 each)
      LD_LIBRARY_PATH=$cuda_lib timeout 400 /tmp/llamacpp-cuda/bin/llama-batched-bench -m /tmp/llama8b-bf16.gguf -ngl 99 -fa on \
        -c 540672 -b 2048 -ub 512 -npp 1024 -ntg 1024 -npl 64,256 2>&1 | grep -E '^\||error|failed' | sed 's/^/long llamacpp: /' |
        tee -a "$OUTD/long.log"
    fi ;;
  http)  # end to end through the HTTP server: radiance serve --placement device, radbench at 1 / 64 / 256 clients, 128 in / 128 out;
         # first rad-enginebench's decode at 64 / 256 rows (the ITL target's yardstick, same call); HTTP_LOCKSTEP=1 also
         # serves with --disable-overlap-schedule ("http lockstep c=..." lines)
    "$B/bin/rad-enginebench" $M8.rad --placement device --prefill "" --decode 64,256 --in 128 --out 128 2>&1 |
      grep -E "^decode" | sed 's/^/http engine: /' | tee "$OUTD/http-engine.log"
    for mode in overlap ${HTTP_LOCKSTEP:+lockstep}; do
      flags=() tag=""
      [[ $mode == lockstep ]] && flags=(--disable-overlap-schedule) tag="lockstep "
      "$B/bin/radiance" serve --model $M8.rad --placement device --port 8089 --max-seqs 256 --max-ctx 512 --max-queue 1024 \
        "${flags[@]}" > "$OUTD/serve-$mode.log" 2>&1 &
      spid=$!
      for _ in $(seq 1 90); do curl -sf http://127.0.0.1:8089/ready >/dev/null && break; sleep 2; done
      for c in 1 64 256; do
        n=$(( c == 1 ? 8 : 2 * c ))
        python3 "$root/tools/radbench/radbench.py" --url http://127.0.0.1:8089 --concurrency $c --requests $n \
          --prompt-tokens 128 --output-tokens 128 2>&1 | sed "s/^/http ${tag}c=$c: /"
      done
      curl -s http://127.0.0.1:8089/props | python3 -c 'import json,sys; s=json.load(sys.stdin)["stats"]; print(sys.argv[1] + "steps", s["steps"], "overlapped", s["overlapped_steps"])' "http $tag"
      kill $spid; wait $spid 2>/dev/null
    done 2>&1 | tee "$OUTD/http.log" ;;
  httpab)  # the front end's token budget a step at 64 / 256 clients: radiance serve --placement device with each --max-batch-tokens of HTTP_TOKENS (default 512 2048 8192), radbench 4 requests a client, 128 in / 128 out
    for tb in ${HTTP_TOKENS:-512 2048 8192}; do
      "$B/bin/radiance" serve --model $M8.rad --placement device --port 8089 --max-seqs 256 --max-ctx 512 --max-queue 1024 \
        --max-batch-tokens "$tb" > "$OUTD/serve-$tb.log" 2>&1 &
      spid=$!
      for _ in $(seq 1 90); do curl -sf http://127.0.0.1:8089/ready >/dev/null && break; sleep 2; done
      for c in 64 256; do
        python3 "$root/tools/radbench/radbench.py" --url http://127.0.0.1:8089 --concurrency $c --requests $((4 * c)) \
          --prompt-tokens 128 --output-tokens 128 2>&1 | sed "s/^/httpab tokens=$tb c=$c: /"
      done
      kill $spid; wait $spid 2>/dev/null
    done 2>&1 | tee "$OUTD/httpab.log" ;;
  cpu16ab)  # why decode on 16 cores trails llama.cpp: radiance tg128 (1B shape) per ISA level, spin and thread count
    cpu16_prep llama3.2-1b >/dev/null 2>&1
    quiet_begin  # a llama.cpp build still running would take the cores being measured
    for cfg in "" "RADIANCE_CPU_SPIN_US=1000" \
      "RADIANCE_CPU_ISA=avx2" "RADIANCE_CPU_ISA=avx512bf16" "RADIANCE_THREADS=8" "RADIANCE_THREADS=12"; do
      r=$(env RADIANCE_THREADS=16 $cfg "$B/bin/rad-enginebench" /tmp/cpu16-llama3.2-1b.rad --placement host --prefill "" --decode 1 --in 16 --out 64 2>&1 | awk '$1 == "decode" {print $4}')
      echo "cpu16ab ${cfg:-default}: tg tok/s $r"
    done 2>&1 | tee "$OUTD/cpu16ab.log"
    echo "cpu16ab per-op times, decode at 16 threads:" | tee -a "$OUTD/cpu16ab.log"
    RADIANCE_THREADS=16 RADIANCE_PROFILE_OPS=1 "$B/bin/rad-enginebench" /tmp/cpu16-llama3.2-1b.rad --placement host --prefill "" \
      --decode 1 --in 16 --out 32 2>&1 | grep -v '^\[info\]' | head -40 | tee -a "$OUTD/cpu16ab.log"
    quiet_end ;;
  cpu16env)  # libcpu settings A/B beside llama.cpp: per round llama-bench tg128 (-t 16), then radiance's tg under each setting of CPU_AB_SET (commas join variables), CPU_AB_ROUNDS rounds, 1B shape
    peers_tokenizers
    cpu16_prep llama3.2-1b >/dev/null 2>&1
    if peers_wait cpu "${PEERS_WAIT_S:-360}"; then
      quiet_begin
      for round in $(seq "${CPU_AB_ROUNDS:-3}"); do
        lc=$(LD_LIBRARY_PATH=$cuda_lib timeout 300 /tmp/llamacpp-cpu/bin/llama-bench -m /tmp/cpu16-llama3.2-1b-bf16.gguf -t 16 -p 0 -n 128 -r 3 -o md 2>&1 |
          awk -F'|' 'NF > 3 && $(NF-2) ~ /tg128/ {print $(NF-1)}')
        echo "cpu16env round $round llama.cpp: tg128 tok/s $lc"
        for setting in ${CPU_AB_SET:-RADIANCE_THREADS=16}; do
          r=$(env RADIANCE_THREADS=16 ${setting//,/ } "$B/bin/rad-enginebench" /tmp/cpu16-llama3.2-1b.rad --placement host --prefill "" --decode 1 --in 16 --out 128 2>&1 | awk '$1 == "decode" {print $4}')
          echo "cpu16env round $round $setting: tg tok/s $r"
        done
      done 2>&1 | tee "$OUTD/cpu16env.log"
      quiet_end
    fi ;;
  cpu16-prep)
    peers_tokenizers
    for m in ${CPU16_MODELS:-llama3.2-1b}; do cpu16_prep "$m"; done ;;
  cpu16)
    {
      peers_tokenizers
      echo "cpu16: $(nproc) cpus ($(lscpu 2>/dev/null | grep -E '^Model name' | sed 's/.*: *//'), $(lscpu 2>/dev/null | grep -E '^Thread\(s\) per core' | sed 's/.*: *//') threads/core), threads ${CPU16_THREADS:-16}"
      ready=()
      for m in ${CPU16_MODELS:-llama3.2-1b}; do cpu16_prep "$m" && ready+=("$m"); done
      if (( ${#ready[@]} )) && peers_wait cpu "${PEERS_WAIT_S:-360}"; then
        quiet_begin
        for p in 1 2; do for m in "${ready[@]}"; do cpu16_pair "$m" $p; done; done
        quiet_end
      fi
    } 2>&1 | tee "$OUTD/cpu16.log" ;;
  esac
done
