// launch_elementwise.cpp: the embed, add and gather_rows rows.
#include <cstring>

#include "launch_util.h"

using namespace cpu;

int cpu_embed(const RadArgs* a) {
    const RadTensor *ids = rad_arg_in(a, 0), *table = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!is_i32(ids) || !table || !is_f32(y) || !is_float_dtype(table->dtype)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), vocab = rad_args_geti(a, "vocab");
    EmbedArgs e{static_cast<const int32_t*>(ids->data),
                table->data,
                table->dtype,
                rows_out(y),
                rad_args_geti(a, "dim"),
                static_cast<float>(rad_args_getf_or(a, "scale", 1.0))};
    for (int64_t i = 0; i < n; ++i)  // every id is checked before any row is written
        if (e.ids[i] < 0 || e.ids[i] >= vocab) return RAD_E_ARG;
    for_rows(n, static_cast<double>(e.dim), kernels().embed, e);
    return RAD_OK;
}

int cpu_add(const RadArgs* a) {
    const RadTensor *p = rad_arg_in(a, 0), *q = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!is_f32(p) || !is_f32(q) || !is_f32(y)) return RAD_E_DTYPE;
    AddArgs args{rows_in(p), rows_in(q), rows_out(y), rad_args_geti(a, "dim")};
    for_rows(rad_args_geti(a, "n"), static_cast<double>(args.dim), kernels().add, args);
    return RAD_OK;
}

namespace {
struct GatherArgs {
    RowsIn x;
    const int32_t* ids;
    RowsOut y;
    int64_t dim;
};
void gather(const GatherArgs& g, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) std::memcpy(g.y.row(i), g.x.row(g.ids[i]), static_cast<size_t>(g.dim) * 4);
}
}  // namespace

int cpu_gather_rows(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *ids = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!is_f32(x) || !is_f32(y) || !is_i32(ids)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n");
    GatherArgs g{rows_in(x), static_cast<const int32_t*>(ids->data), rows_out(y), rad_args_geti(a, "dim")};
    for (int64_t i = 0; i < n; ++i)
        if (g.ids[i] < 0 || (x->rank > 0 && g.ids[i] >= x->shape[0])) return RAD_E_ARG;
    for_rows(n, static_cast<double>(g.dim), gather, g);
    return RAD_OK;
}
