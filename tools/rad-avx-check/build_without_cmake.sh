#!/bin/bash
# tools/rad-avx-check/build_without_cmake.sh [OUT]: builds libref, libcpu, rad-avx-check and
# rad-cpubench with plain g++ (no project configure, none of its dependencies) into OUT
# (default /tmp/cpub), as OUT/bin and OUT/share/radiance/kernels. Run from the repository root;
# it is how libcpu was checked and measured on a machine with AVX-512 (docs/CPU_KERNELS.md).
set -e
B=${1:-/tmp/cpub}; mkdir -p $B/obj $B/share/radiance/kernels $B/bin
R=$(pwd)
CXX="g++ -std=c++20 -O3 -fPIC -DNDEBUG -I$R/shared/include"
W="-Wall -Wno-unused-parameter -Wno-missing-field-initializers -Wno-uninitialized -Wno-maybe-uninitialized"
$CXX -ffp-contract=off -fno-fast-math -shared -fvisibility=hidden $R/plugins/kernels/ref/*.cpp -o $B/share/radiance/kernels/libref.so &
for f in exports isa pool launch_gemm launch_norm launch_activation launch_elementwise launch_rope launch_attention \
         isa_scalar isa_avx2 isa_avx512 isa_avx512bf16; do
  $CXX $W -fvisibility=hidden -c $R/plugins/kernels/cpu/$f.cpp -o $B/obj/$f.o &
done
$CXX $W -fvisibility=hidden -ffp-contract=off -fno-fast-math -c $R/plugins/kernels/cpu/rope_freqs.cpp -o $B/obj/rope_freqs.o &
T=$R/tools/rad-avx-check
TI="-I$T -I$R/shared/core/include -I$R/shared/util/include -I$R/shared/container/include"
for f in main check_case cases_gemm cases_attention cases_rope cases_rowwise batch_invariance kernel_lib; do
  $CXX $W $TI -c $T/$f.cpp -o $B/obj/t_$f.o &
done
$CXX $W $TI -c $R/shared/core/schema_compare.cpp -o $B/obj/t_schema_compare.o &
$CXX $W $TI -c $R/shared/core/constraint.cpp -o $B/obj/t_constraint.o &
$CXX $W $TI -c $R/bench/cpu_gemm_bench.cpp -o $B/obj/b_bench.o &
wait
g++ -shared $B/obj/{exports,isa,pool,launch_*,rope_freqs,isa_*}.o -o $B/share/radiance/kernels/libcpu.so -lpthread -Wl,-z,nodelete
g++ $B/obj/t_*.o -o $B/bin/rad-avx-check -ldl
g++ $B/obj/b_bench.o $B/obj/t_kernel_lib.o $B/obj/t_constraint.o -o $B/bin/rad-cpubench -ldl
echo built into $B
