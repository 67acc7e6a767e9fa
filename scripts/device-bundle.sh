#!/usr/bin/env bash
# device-bundle.sh [OUT] — pack what a GPU machine without gRPC, Boost or apt needs to run this
# build: the tools and the worker, the plugins (a RADIANCE_HOME), every shared library ldd names
# except the C/C++ runtime and CUDA's own (that machine has CUDA), stripped, and the golden
# fixtures from ../shared (the repository's own travel with it), then compress it all into
# .devcarry/bundle.tar.xz. There: mkdir B && tar -C B -xJf .devcarry/bundle.tar.xz and run with
# LD_LIBRARY_PATH=B/lib:/usr/local/cuda/lib64.
# The tree that travels with a call is capped at 64 MiB: BUNDLE_TRACE=0 leaves out the CUPTI
# timeline (librad_cudatrace, libcupti), BUNDLE_FIXTURES=0 the golden fixtures (or names a few), for calls that
# carry llama.cpp's source and tokenizers beside the bundle.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/.bundle}
build=${BUILD_DIR:-$root/build}
shared=${RAD_SHARED_DIR:-$root/../shared}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/share/radiance" "$out/fixtures"
# BUNDLE_BINS: the tools to take (default all of them; "rad-golden rad-kbench" for card checks
# beside a repository near the 64 MiB a call carries)
for b in ${BUNDLE_BINS:-radiance radiance-worker rad-golden rad-convert rad-info rad-ppl rad-kbench rad-enginebench rad-collbench}; do
  [[ -x $build/bin/$b ]] && cp "$build/bin/$b" "$out/bin/"
done
# the CUPTI kernel timeline (tools/rad-cudatrace; CUDA_INJECTION64_PATH) with its libcupti
[[ ${BUNDLE_TRACE:-1} != 0 && -f $build/lib/librad_cudatrace.so ]] && cp "$build/lib/librad_cudatrace.so" "$out/lib/"
for kind in kernels architectures quantizers; do
  [[ -d $build/share/radiance/$kind ]] && cp -r "$build/share/radiance/$kind" "$out/share/radiance/"
done
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libdl\.so|libpthread\.so|librt\.so|libcuda\.so|libcudart|libcublas|libnccl)'
for f in "$out"/bin/* "$out"/share/radiance/*/*.so "$out"/lib/librad_cudatrace.so; do
  [[ -e $f ]] || continue
  ldd "$f" 2>/dev/null | awk '/=>/ && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $skip ]] && continue
    [[ -e $out/lib/$name ]] || cp -L "$path" "$out/lib/$name"
  done
done
strip --strip-unneeded "$out"/lib/*.so* "$out"/bin/* 2>/dev/null || true
# each with its teacher-forced decode references beside it, where rad-golden looks for them
# (BUNDLE_FIXTURES: 1 all of them, 0 none, else the names to take, "mixtral qwen3_moe")
case ${BUNDLE_FIXTURES:-1} in
  0) fixtures=() ;;
  1) fixtures=(llama qwen2 qwen3 mistral_swa mixtral qwen3_moe gemma3) ;;
  *) read -r -a fixtures <<< "$BUNDLE_FIXTURES" ;;
esac
for fx in "${fixtures[@]}"; do
  [[ -d $shared/fixtures/golden/$fx ]] || continue
  cp -r "$shared/fixtures/golden/$fx" "$out/fixtures/"
  chmod -R u+w "$out/fixtures/$fx"
  ref=$root/tests/golden/decode_refs/$fx.safetensors
  if [[ -f $ref ]]; then cp "$ref" "$out/fixtures/$fx/decode.safetensors"; fi
done
# The tree that travels is capped (64 MiB with the repository): carry one compressed file.
mkdir -p "$root/.devcarry"
tar -C "$out" -cf - . | xz -T0 -6 > "$root/.devcarry/bundle.tar.xz"
du -sh "$out" "$root/.devcarry/bundle.tar.xz"
