// launch_moe.cpp: the mixture-of-experts rows (and gated_add, a shared expert's join). Routing is
// a sliver of a layer (experts x rows exponentials), so it is libref's own code (rad_host_moe.h);
// the experts' MLPs are the chain of libcpu's own gemm and swiglu rows over the rows grouped by
// expert (rad_compose_moe.h), so prefill runs blocked GEMMs per expert.
#include <radiance/kernels/rad_compose_moe.h>
#include <radiance/kernels/rad_host_moe.h>

#include "launch_util.h"

// Routing and the shared expert's join as libref's (rad_host_moe.h), instantiated here, in a file
// built without FMA contraction.
int cpu_moe_route(const RadArgs* a) { return rad_host_moe_route(a); }
int cpu_gated_add(const RadArgs* a) { return rad_host_gated_add(a); }

int cpu_moe_mlp(const RadArgs* a) { return rad_compose_moe_mlp(a, cpu_gemm, cpu_swiglu); }
