#!/usr/bin/env bash
# kernel_sizes.sh [BUILD_DIR] [FILTER] — the machine code size of every libgpu kernel, largest first.
#
# Why: a decode-chain kernel that one block an SM runs straight through once a layer fetches its
# instructions cold each time, and that fetch, not its data, can be most of its latency (the decode
# attention at 121 KB: docs/PERFORMANCE.md, session 17). Each libgpu source is compiled to a cubin
# with the build's own nvcc command (ninja -t commands), and readelf reads each kernel's .text
# section. Needs a configured CUDA build (ninja) and nvcc; no card. FILTER: an extended regex on
# the mangled kernel names (default: all). Prints "bytes  file  kernel".
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
filter=${2:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
objdir=plugins/kernels/gpu/CMakeFiles/libgpu_plugin.dir
for src in "$root"/plugins/kernels/gpu/*.cu; do
  name=$(basename "$src" .cu)
  cmd=$(cd "$build" && ninja -t commands "$objdir/$name.cu.o" 2>/dev/null | tail -1) || true
  [[ $cmd == *nvcc* ]] || { echo "kernel_sizes: no nvcc command for $name.cu in $build" >&2; continue; }
  cmd=${cmd#*ccache }
  cmd=$(sed -E "s| -o [^ ]+\.o| -o $tmp/$name.cubin|; s| -c | -cubin |; s|-Xcompiler=-fPIC||" <<< "$cmd")
  (cd "$build" && eval "$cmd") > "$tmp/$name.log" 2>&1 || { echo "kernel_sizes: $name.cu failed:" >&2; tail -5 "$tmp/$name.log" >&2; continue; }
  # "[Nr] Name Type Address Off Size ...": the number's brackets stripped, Name is $1 and Size $5
  readelf -S -W "$tmp/$name.cubin" 2>/dev/null | sed -E 's/^ *\[ *[0-9]+\] *//' | awk '$1 ~ /^\.text\./ { print $5, $1 }' |
    while read -r size section; do echo "$((16#$size)) $name.cu ${section#.text.}"; done
done | grep -E "$filter" | sort -rn | awk '{ printf "%8d  %-22s %s\n", $1, $2, $3 }'
