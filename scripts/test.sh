#!/usr/bin/env bash
# The one command that sets up a fresh Debian 12 machine and runs every test.
#   scripts/test.sh            install packages (apt), build, run all tests
# Order: sanitizer and fuzz passes over the parsers first, then the full ctest run, whose summary
# line ("100% tests passed, 0 tests failed out of N") is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}

bash scripts/setup-deps.sh

echo "== sanitizers (ASan + UBSan) over the container reader and the loader"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAD_SANITIZE=ON -DRAD_BUILD_FRONTEND=OFF >/dev/null
cmake --build build-asan -j"$JOBS" --target core_tests
ASAN_OPTIONS=detect_leaks=1 build-asan/bin/core_tests

echo "== libFuzzer over the container reader (${FUZZ_SECONDS}s)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAD_FUZZ=ON \
  -DRAD_BUILD_FRONTEND=OFF >/dev/null
cmake --build build-fuzz -j"$JOBS" --target container_fuzz container_seed
rm -rf build-fuzz/corpus && mkdir -p build-fuzz/corpus
build-fuzz/bin/container_seed build-fuzz/corpus
build-fuzz/bin/container_fuzz -max_total_time="$FUZZ_SECONDS" -max_len=16384 -timeout=10 build-fuzz/corpus 2>&1 | tail -3

# Compile-only check of libgpu for AMD (docs/GPU_KERNELS.md); fails the script on a compile error
# and says "skipped" itself where clang-19 or the HIP headers are absent.
echo "== AMD compile check of libgpu (clang-19 -x hip, gfx1100 and gfx1201)"
bash scripts/hip-compile-check.sh

echo "== build and run every test"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$JOBS"
cd build
ctest --output-on-failure -j"$JOBS" --timeout 1200
