// k_collectives.cu: all_reduce for tensor parallelism on cards that share one host.
//
// Host staging: the rows travel to the host, the ranks add them in rank order through the
// engine's shared-memory communicator (rad_host_collectives.h, the same bytes libref and libcpu
// produce), and the sums travel back. The launch waits for its queue, which a device row
// otherwise never does: tensor-parallel steps are not recorded as graphs (the engine records only
// one-rank decode steps), and an NCCL row over P2P, matched on device.p2p, is the faster path
// still to come (docs/GPU_KERNELS.md).
#include <radiance/kernels/rad_host_collectives.h>

#include <vector>

#include "k_common.h"

namespace gpu {

int all_reduce_staged(const RadArgs* a) {
    RadTensor* x = rad_arg_out(a, 0);
    if (!x || x->dtype != RAD_F32) return RAD_E_DTYPE;
    const RadComm* c = static_cast<const RadComm*>(a->comm);
    if (!c || c->world <= 1) return RAD_OK;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const int64_t pitch = rad_tensor_row_pitch(x);
    thread_local std::vector<float> host;
    host.resize(static_cast<size_t>(n * dim));
    gpuStream_t s = stream_of(a);
    if (gpuMemcpy2DAsync(host.data(), static_cast<size_t>(dim) * 4, x->data, static_cast<size_t>(pitch), static_cast<size_t>(dim) * 4,
                         static_cast<size_t>(n), gpuMemcpyDeviceToHost, s) != gpuSuccess ||
        gpuStreamSynchronize(s) != gpuSuccess)
        return RAD_E_INTERNAL;
    RadTensor h = *x;
    h.data = host.data();
    h.row_pitch = dim * 4;
    RadArgs ha = *a;
    ha.t = &h;
    ha.n_t = 1;
    if (int rc = rad_host_all_reduce_f32(&ha); rc != RAD_OK) return rc;
    if (gpuMemcpy2DAsync(x->data, static_cast<size_t>(pitch), host.data(), static_cast<size_t>(dim) * 4, static_cast<size_t>(dim) * 4,
                         static_cast<size_t>(n), gpuMemcpyHostToDevice, s) != gpuSuccess ||
        gpuStreamSynchronize(s) != gpuSuccess)  // `host` is reused by the next launch
        return RAD_E_INTERNAL;
    return RAD_OK;
}

}  // namespace gpu
