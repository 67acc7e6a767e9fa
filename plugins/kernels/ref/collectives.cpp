#include <radiance/kernels/rad_host_collectives.h>

#include "ref_util.h"

int ref_all_reduce(const RadArgs* a) { return rad_host_all_reduce_f32(a); }
int ref_all_gather(const RadArgs* a) { return rad_host_all_gather_f32(a); }
