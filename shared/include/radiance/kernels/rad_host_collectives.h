/* rad_host_collectives.h: the host-staging all_reduce, header-only so every host kernel library
 * (libref, libcpu) serves the same bytes. Each rank copies its rows into its staging slot, waits
 * for everyone, sums the slots in rank order into its own x, and waits again before the slots are
 * reused. Rows are sent in chunks that fit a slot. */
#ifndef RADIANCE_RAD_HOST_COLLECTIVES_H
#define RADIANCE_RAD_HOST_COLLECTIVES_H

#include "../rad_plugin.h"

static inline int rad_host_all_reduce_f32(const RadArgs* a) {
    RadTensor* x = rad_arg_out(a, 0);
    if (!x || x->dtype != RAD_F32) return RAD_E_DTYPE;
    RadComm* c = (RadComm*)a->comm;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    if (!c || c->world <= 1) return RAD_OK; /* one rank: nothing to add */
    if (!c->staging || !c->barrier || c->slot_bytes < (uint64_t)dim * 4) return RAD_E_UNSUPPORTED;
    const int64_t rows_per_chunk = (int64_t)(c->slot_bytes / ((uint64_t)dim * 4));
    const int64_t pitch = rad_tensor_row_pitch(x);
    for (int64_t r0 = 0; r0 < n; r0 += rows_per_chunk) {
        const int64_t rows = n - r0 < rows_per_chunk ? n - r0 : rows_per_chunk;
        float* mine = (float*)((char*)c->staging + (uint64_t)c->rank * c->slot_bytes);
        for (int64_t i = 0; i < rows; ++i) memcpy(mine + i * dim, (char*)x->data + (r0 + i) * pitch, (size_t)dim * 4);
        int rc = c->barrier(c);
        if (rc != RAD_OK) return rc;
        for (int64_t i = 0; i < rows; ++i) {
            float* out = (float*)((char*)x->data + (r0 + i) * pitch);
            for (int64_t j = 0; j < dim; ++j) {
                float s = ((const float*)c->staging)[i * dim + j];
                for (int32_t k = 1; k < c->world; ++k)
                    s += ((const float*)((const char*)c->staging + (uint64_t)k * c->slot_bytes))[i * dim + j];
                out[j] = s;
            }
        }
        rc = c->barrier(c);
        if (rc != RAD_OK) return rc;
    }
    return RAD_OK;
}

/* all_gather through the same staging: each rank's rows go to its slot, then every rank copies
 * every slot into its columns of y. Rows are sent in chunks that fit a slot at the widest span. */
static inline int rad_host_all_gather_f32(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    RadComm* c = (RadComm*)a->comm;
    const int64_t n = rad_args_geti(a, "n"), total = rad_args_geti(a, "total");
    const int32_t W = c && c->world > 1 ? c->world : 1, r = W > 1 ? c->rank : 0;
    const int64_t lo = (int64_t)r * total / W, width = ((int64_t)r + 1) * total / W - lo;
    const int64_t xp = rad_tensor_row_pitch(x), yp = rad_tensor_row_pitch(y);
    if (rad_tensor_lastdim(x) < width) return RAD_E_SHAPE;
    if (W == 1) {
        for (int64_t i = 0; i < n; ++i) memcpy((char*)y->data + i * yp, (const char*)x->data + i * xp, (size_t)total * 4);
        return RAD_OK;
    }
    const int64_t widest = (total + W - 1) / W + 1;
    if (!c->staging || !c->barrier || c->slot_bytes < (uint64_t)widest * 4) return RAD_E_UNSUPPORTED;
    const int64_t rows_per_chunk = (int64_t)(c->slot_bytes / ((uint64_t)widest * 4));
    for (int64_t r0 = 0; r0 < n; r0 += rows_per_chunk) {
        const int64_t rows = n - r0 < rows_per_chunk ? n - r0 : rows_per_chunk;
        float* mine = (float*)((char*)c->staging + (uint64_t)r * c->slot_bytes);
        for (int64_t i = 0; i < rows; ++i) memcpy(mine + i * width, (const char*)x->data + (r0 + i) * xp, (size_t)width * 4);
        int rc = c->barrier(c);
        if (rc != RAD_OK) return rc;
        for (int32_t k = 0; k < W; ++k) {
            const int64_t klo = (int64_t)k * total / W, kw = ((int64_t)k + 1) * total / W - klo;
            const float* slot = (const float*)((const char*)c->staging + (uint64_t)k * c->slot_bytes);
            for (int64_t i = 0; i < rows; ++i) memcpy((char*)y->data + (r0 + i) * yp + klo * 4, slot + i * kw, (size_t)kw * 4);
        }
        rc = c->barrier(c);
        if (rc != RAD_OK) return rc;
    }
    return RAD_OK;
}

#endif
