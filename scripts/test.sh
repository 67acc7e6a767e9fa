#!/usr/bin/env bash
# The one command that sets up a fresh Debian 12 machine and runs every test.
#   scripts/test.sh            install packages (apt), build, run all tests
# Order: sanitizer and fuzz passes over the parsers first, then the full ctest run, whose summary
# line ("100% tests passed, 0 tests failed out of N") is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}  # per fuzz target

bash scripts/setup-deps.sh

# One sanitizer tree (clang, ASan + UBSan with no recovery, libFuzzer's coverage) for the tests of
# everything that parses outside input and for the fuzz targets: the container reader and the
# loader (core_tests), the step codec (rad_ipc_tests), API bodies (rad_api_tests, its random-body
# test included), Jinja (test_jinja, its fuzz test included), the tokenizer and structured output's
# parsers (rad_grammar_tests).
SAN_TESTS=(core_tests rad_ipc_tests rad_api_tests test_jinja rad_tokenizer_tests rad_grammar_tests)
echo "== sanitizer tree (clang, ASan + UBSan, libFuzzer): ${SAN_TESTS[*]} and the fuzz targets"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAD_FUZZ=ON >/dev/null
cmake --build build-fuzz -j"$JOBS" --target "${SAN_TESTS[@]}" container_fuzz container_seed step_fuzz step_seed grammar_fuzz grammar_seed gguf_fuzz gguf_seed \
  safetensors_fuzz safetensors_seed tokenizer_fuzz tokenizer_seed
for t in "${SAN_TESTS[@]}"; do
  echo "-- $t under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1 build-fuzz/bin/"$t"
done

# Each fuzz target from its seed corpus; a crash, a sanitizer report or a 10 s input fails.
fuzz() {
  local name=$1 seed=$2 max_len=$3
  echo "== libFuzzer: $name (${FUZZ_SECONDS}s)"
  rm -rf "build-fuzz/corpus-$name" && mkdir -p "build-fuzz/corpus-$name"
  "build-fuzz/bin/$seed" "build-fuzz/corpus-$name"
  # Inputs that once failed, replayed first (a file per input, named after its target).
  local found=(tests/fuzz/regressions/"$name"-*)
  if [[ -e ${found[0]} ]]; then "build-fuzz/bin/$name" -timeout=10 "${found[@]}" 2>&1 | tail -1; fi
  "build-fuzz/bin/$name" -max_total_time="$FUZZ_SECONDS" -max_len="$max_len" -timeout=10 "build-fuzz/corpus-$name" 2>&1 | tail -3
}
fuzz container_fuzz container_seed 16384
fuzz step_fuzz step_seed 4096
fuzz grammar_fuzz grammar_seed 2048
fuzz gguf_fuzz gguf_seed 8192
fuzz safetensors_fuzz safetensors_seed 4096
fuzz tokenizer_fuzz tokenizer_seed 4096

# Compile-only check of libgpu for AMD (docs/GPU_KERNELS.md); fails the script on a compile error,
# on a kernel file with no AMD kernel that is not listed as such, and without clang-19 or HIP.
echo "== AMD compile check of libgpu (clang-19 -x hip, gfx1100 and gfx1201)"
bash scripts/hip-compile-check.sh

echo "== build and run every test"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$JOBS"
cd build
ctest --output-on-failure -j"$JOBS" --timeout 1200
