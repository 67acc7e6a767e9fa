#!/usr/bin/env bash
# llamacpp-pack.sh [MIRROR_GIT_DIR] — pack llama.cpp's source for a GPU machine without internet:
# .devcarry/llamacpp.tar.xz holds what a CPU + CUDA build of llama-bench and llama-batched-bench
# (and llama-quantize, for GGUF K-quant fixtures) needs (ggml with only its CPU and CUDA backends, src, include, common, vendor less miniaudio/stb,
# cmake/) plus the HF -> GGUF converter (convert_hf_to_gguf.py, conversion/, gguf-py/), a
# tools/CMakeLists.txt that adds only those two tools, and LLAMACPP_COMMIT. Also packs the llama3
# and qwen3 tokenizers of ../shared into .devcarry/tokenizers.tar.xz (the random checkpoints the
# GPU stages make have none; shared/ beside the checkout does not travel).
# On the GPU machine: bench/peers/llamacpp-build.sh .devcarry/llamacpp.tar.xz (or the
# device_run.sh stage peers-build).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mirror=${1:-/work/.mirror/unslothai+llama.cpp}
shared=${RAD_SHARED_DIR:-$root/../shared}
# The git dir: the argument itself, or a bare repository somewhere under it.
if git --git-dir="$mirror" rev-parse --git-dir >/dev/null 2>&1; then
  gd=$mirror
else
  gd=$(find "$mirror" -maxdepth 3 -name HEAD -type f -printf '%h\n' 2>/dev/null |
    while read -r d; do git --git-dir="$d" rev-parse HEAD >/dev/null 2>&1 && { echo "$d"; break; }; done)
fi
[[ -n ${gd:-} ]] || { echo "llamacpp-pack: no git dir under $mirror" >&2; exit 1; }
g() { git --git-dir="$gd" "$@"; }
commit=$(g rev-parse HEAD)
echo "llamacpp-pack: git dir $gd commit $commit ($(g log -1 --format='%cd %s' --date=short HEAD))"

keep=(CMakeLists.txt LICENSE cmake ggml src include common vendor gguf-py conversion convert_hf_to_gguf.py
  tools/llama-bench tools/batched-bench tools/quantize)
# Backends other than CPU and CUDA: ggml/src/CMakeLists.txt adds each only when its GGML_<NAME> is on.
drop=()
while read -r d; do
  case $d in ggml/src/ggml-cpu|ggml/src/ggml-cuda) ;; ggml/src/ggml-*) drop+=(":(exclude)$d") ;; esac
done < <(g ls-tree -d --name-only HEAD ggml/src/)
drop+=(":(exclude)vendor/miniaudio" ":(exclude)vendor/stb")  # only tools/mtmd uses them
for p in "${keep[@]}"; do
  g cat-file -e "HEAD:$p" 2>/dev/null || { echo "llamacpp-pack: $p is not in the commit" >&2; exit 1; }
done
# Blobs a partial mirror lacks would make archive fail; name them.
missing=$(g ls-tree -r HEAD -- "${keep[@]}" | awk '{print $3}' | g cat-file --batch-check | grep -c ' missing$' || true)
[[ $missing == 0 ]] || { echo "llamacpp-pack: $missing blobs missing from the mirror" >&2; exit 1; }

tmp=$(mktemp -d /tmp/llamacpp-pack.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src"
# (archive complains about blobs a partial mirror lacks outside these paths: filtered, then counted)
g archive --format=tar HEAD -- "${keep[@]}" "${drop[@]}" 2> "$tmp/archive.err" | tar -C "$tmp/src" -xf -
grep -v '^error: invalid object' "$tmp/archive.err" >&2 || true
drop_re='^(ggml/src/ggml-[A-Za-z0-9_-]+/|vendor/(miniaudio|stb)/)'
want=$(g ls-tree -r --name-only HEAD -- "${keep[@]}" | grep -v -E "$drop_re" | wc -l)
want=$((want + $(g ls-tree -r --name-only HEAD -- ggml/src/ggml-cpu ggml/src/ggml-cuda | wc -l)))
got=$(find "$tmp/src" -type f | wc -l)
[[ $got == "$want" ]] || { echo "llamacpp-pack: archive gave $got files, expected $want" >&2; exit 1; }
# tools/CMakeLists.txt of the commit adds every tool folder (server, mtmd, ...): replace it.
cat > "$tmp/src/tools/CMakeLists.txt" <<'EOF'
# written by radiance's bench/peers/llamacpp-pack.sh: only the two benchmark tools and the quantiser travel
find_package(Threads REQUIRED)
llama_add_compile_flags()
add_subdirectory(batched-bench)
add_subdirectory(llama-bench)
add_subdirectory(quantize)
EOF
echo "$commit" > "$tmp/src/LLAMACPP_COMMIT"
mkdir -p "$root/.devcarry"
out=$root/.devcarry/llamacpp.tar.xz
tar -C "$tmp/src" --owner=0 --group=0 --sort=name -cf - . | nice -n 10 xz -T0 -9e > "$out.part"
mv "$out.part" "$out"
nfiles=$(find "$tmp/src" -type f | wc -l)
size=$(stat -c %s "$out")
echo "llamacpp-pack: $out $size bytes ($(awk "BEGIN{printf \"%.2f\", $size/1048576}") MiB), $nfiles files, unpacked $(du -sh "$tmp/src" | cut -f1), commit $commit"
(( size < 25 * 1048576 )) || { echo "llamacpp-pack: tarball over 25 MiB" >&2; exit 1; }

# Tokenizers for the random checkpoints (tokenizer.json + tokenizer_config.json of each).
tok=$root/.devcarry/tokenizers.tar.xz
if [[ -d $shared/tokenizers/llama3 ]]; then
  mkdir -p "$tmp/tok"
  for t in llama3 qwen3; do
    [[ -f $shared/tokenizers/$t/tokenizer.json ]] || continue
    mkdir -p "$tmp/tok/$t"
    cp "$shared/tokenizers/$t/tokenizer.json" "$tmp/tok/$t/"
    [[ -f $shared/tokenizers/$t/tokenizer_config.json ]] && cp "$shared/tokenizers/$t/tokenizer_config.json" "$tmp/tok/$t/"
  done
  tar -C "$tmp/tok" --owner=0 --group=0 --mode=u+rw,go+r --sort=name -cf - . | nice -n 10 xz -T0 -9 > "$tok.part" && mv "$tok.part" "$tok"
  echo "llamacpp-pack: $tok $(stat -c %s "$tok") bytes ($(ls "$tmp/tok" | tr '\n' ' '))"
else
  echo "llamacpp-pack: no tokenizers under $shared/tokenizers; the GGUF stages need .devcarry/tokenizers.tar.xz" >&2
fi
du -ch "$root"/.devcarry/* | tail -1 | sed 's/^/llamacpp-pack: .devcarry total /'
