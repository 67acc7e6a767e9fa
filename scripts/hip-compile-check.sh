#!/usr/bin/env bash
# hip-compile-check.sh: compiles libgpu's sources (plugins/kernels/gpu) for AMD RDNA cards with
# Debian 12's clang-19 and HIP headers (libamdhip64-dev), to keep the CUDA/HIP common dialect
# (radiance/kernels/gpu_runtime.h) honest on a machine without an AMD card. Compile only: nothing
# is linked and nothing runs.
#   scripts/hip-compile-check.sh        check gfx1100 and gfx1201
#   HIP_TARGETS="gfx1100" HIP_CLANG=clang++-19 HIP_PATH=/usr scripts/hip-compile-check.sh
# Prints one line per file and target with the number of AMD kernels its device code holds; exits 1
# when anything fails to compile, when a .cu file compiles to no AMD kernel and is not listed in
# NO_AMD_KERNEL below with its reason, or when clang-19 or the HIP headers are absent (setup-deps.sh
# installs both; RAD_HIP_CHECK=skip says "skipped" and exits 0, for a machine that cannot have them).
# Mutations run (2026-12-04): a k_empty.cu with host code only fails ("no AMD kernel"); clang
# missing fails (exit 1); before this, both said "ok" / "skipped" and exited 0.
#
# Flags, and why:
#   -x hip --offload-arch=gfxNNNN  the .cu files (and device.cpp/exports.cpp) as HIP for that card.
#   -nogpulib                      Debian ships no ROCm device libraries (ocml/ockl bitcode); the
#                                  compile itself does not need them.
#   --hip-path=$HIP_PATH           where clang finds the HIP runtime headers ($HIP_PATH/include/hip;
#                                  /usr on Debian). clang adds that dir with -idirafter, which keeps
#                                  libstdc++'s #include_next working (a plain -I/-isystem /usr/include
#                                  does not). We keep clang's own __clang_hip_runtime_wrapper.h, so no
#                                  -nogpuinc: ROCm 5.2's amd_hip_runtime.h then includes
#                                  <include/cuda_wrappers/algorithm> and the math forward declarations
#                                  only the wrapper provides, and fails without it.
#   Device and host compile are separate steps because a plain -c links the device code object with
#   ld.lld, and Debian's clang-19 does not pull in lld-19 (the default ld.lld, from lld-14, rejects
#   "elf64_amdgpu"). So each .cu is compiled
#     --offload-device-only -S  front end + the AMDGPU backend down to gfx ISA assembly (no linker),
#     --offload-host-only -c    the host side: launch stubs, HIP runtime API calls, host wrappers;
#   the .cpp files (device.cpp, exports.cpp, phase.cpp) are host code only (--offload-host-only -c).
#   __HIP_PLATFORM_AMD__ needs no -D: clang -x hip defines __HIPCC__, which gpu_runtime.h keys on,
#   and the HIP headers define the platform macro themselves. No -mwavefrontsize64: RDNA runs
#   wave32 and gpu_runtime.h asserts kWarpSize == the wavefront size in device compiles.
#   -Wno-unused-result: HIP marks hipFree & co. [[nodiscard]]; device.cpp discards those results on
#   purpose on release paths (cudart has no such attribute, so nvcc is silent).
set -uo pipefail
cd "$(dirname "$0")/.."

CLANG=${HIP_CLANG:-clang++-19}
HIP_PATH=${HIP_PATH:-}
read -r -a TARGETS <<<"${HIP_TARGETS:-gfx1100 gfx1201}"

# A missing compiler or missing headers fail the check: a check that cannot run has not passed.
unavailable() {
  if [ "${RAD_HIP_CHECK:-}" = skip ]; then
    echo "hip-compile-check: skipped (RAD_HIP_CHECK=skip): $1"
    exit 0
  fi
  echo "hip-compile-check: FAILED: $1 (scripts/setup-deps.sh installs it; RAD_HIP_CHECK=skip skips the check)"
  exit 1
}
if ! command -v "$CLANG" >/dev/null 2>&1; then
  unavailable "$CLANG not found (apt-get install clang-19 libamdhip64-dev)"
fi
if [ -z "$HIP_PATH" ]; then
  for d in /usr /opt/rocm; do
    if [ -f "$d/include/hip/hip_runtime.h" ]; then HIP_PATH=$d; break; fi
  done
fi
if [ -z "$HIP_PATH" ] || [ ! -f "$HIP_PATH/include/hip/hip_runtime.h" ]; then
  unavailable "no HIP headers (hip/hip_runtime.h) under ${HIP_PATH:-/usr or /opt/rocm}/include (apt-get install libamdhip64-dev)"
fi

SRC=plugins/kernels/gpu
OUT=$(mktemp -d "${TMPDIR:-/tmp}/hip-compile-check.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
COMMON=(-x hip -nogpulib "--hip-path=$HIP_PATH" -std=c++17 -O2 -I shared/include -Wno-unused-result)

echo "hip-compile-check: $("$CLANG" --version | head -1), HIP headers under $HIP_PATH/include, targets ${TARGETS[*]}"
fails=0
total=0
# Runs one compile; its diagnostics (warnings included) are printed under the file's line.
compile() {
  local log=$1
  shift
  "$CLANG" "$@" >>"$log" 2>&1
}
# .cu files that compile to no AMD kernel on purpose, each with its reason. Any other .cu file whose
# device code holds no kernel (.amdhsa_kernel) for a target fails the check, and so does a listed one
# that has kernels after all (the list must stay true).
declare -A NO_AMD_KERNEL=(
  [k_attention_decode.cu]="decode attention on mma.sync PTX tiles (k_mma.h), CUDA only; AMD decodes with k_attention.cu's k_attend"
  [k_attention_flash.cu]="prefill attention on Hopper wgmma and mma.sync PTX (k_wgmma.h, k_mma.h), CUDA only; AMD prefills with k_attention.cu"
)
# Every source of libgpu is compiled: all .cu and .cpp files in $SRC (headers through them). A source
# needing a build switch to hold anything gets it here (phase.cpp: the RADIANCE_GPU_PHASES build).
declare -A EXTRA_FLAGS=(
  [phase.cpp]="-DRAD_GPU_PHASES=1"
)
for arch in "${TARGETS[@]}"; do
  for f in "$SRC"/*.cu "$SRC"/*.cpp; do
    name=$(basename "$f")
    log="$OUT/$name.$arch.log"
    : >"$log"
    total=$((total + 1))
    ok=1
    why=""
    read -r -a extra <<<"${EXTRA_FLAGS[$name]:-}"
    if [[ $name == *.cu ]]; then
      compile "$log" "${COMMON[@]}" "${extra[@]}" --offload-arch="$arch" --offload-device-only -S "$f" -o "$OUT/$name.$arch.s" || ok=0
      [ $ok -eq 1 ] && { compile "$log" "${COMMON[@]}" "${extra[@]}" --offload-arch="$arch" --offload-host-only -c "$f" \
        -o "$OUT/$name.$arch.host.o" || ok=0; }
      kernels=0
      [ $ok -eq 1 ] && kernels=$(grep -c '^[[:space:]]*\.amdhsa_kernel ' "$OUT/$name.$arch.s")
      what="device asm with $kernels AMD kernels + host object"
      if [ $ok -eq 1 ] && [ "$kernels" -eq 0 ] && [ -z "${NO_AMD_KERNEL[$name]:-}" ]; then
        ok=0
        why=": no AMD kernel in its device code, and not listed in NO_AMD_KERNEL with a reason"
      elif [ $ok -eq 1 ] && [ "$kernels" -gt 0 ] && [ -n "${NO_AMD_KERNEL[$name]:-}" ]; then
        ok=0
        why=": listed in NO_AMD_KERNEL (${NO_AMD_KERNEL[$name]}) but holds $kernels AMD kernels"
      elif [ -n "${NO_AMD_KERNEL[$name]:-}" ]; then
        what="$what; none on purpose: ${NO_AMD_KERNEL[$name]}"
      fi
    else
      what="host object"
      compile "$log" "${COMMON[@]}" "${extra[@]}" --offload-arch="$arch" --offload-host-only -c "$f" -o "$OUT/$name.$arch.host.o" || ok=0
    fi
    [ -n "${extra[*]}" ] && what="$what, ${extra[*]}"
    if [ $ok -eq 1 ]; then
      echo "  ok      $arch  $name ($what)"
    else
      echo "  FAILED  $arch  $name ($what)$why"
      fails=$((fails + 1))
    fi
    [ -s "$log" ] && sed 's/^/          /' "$log"
  done
done
if [ $fails -ne 0 ]; then
  echo "hip-compile-check: $fails of $total compiles FAILED"
  exit 1
fi
echo "hip-compile-check: all $total compiles ok (compile only; nothing linked or run)"
