// libfakedev: a pretend card for testing the engine's device placement on machines without one.
//
// Its "device memory" is host memory and its rows are libref's functions declared as device
// rows, so a plan placed on it must compute what libref computes on the host. What it checks is
// the engine's side: placement and device-only selection, the weights' upload, the arena, KV and
// scratch on the card, the staged step inputs (a raw operand pointing anywhere else would read
// the host array the arch saw, not the copy: this library's copies are real), greedy argmax on
// the card, and decode graphs (radiance/kernels/pretend_card.h: every launch and copy between
// graph_begin and graph_end recorded, replayed by graph_launch).
#include <radiance/kernels/pretend_card.h>
#include <radiance/kernels/rad_compose.h>
#include <radiance/rad_ops.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ref_util.h"

namespace {

int ref_add_rms_norm(const RadArgs* a) { return rad_compose_add_rms_norm(a, ref_add, ref_rms_norm); }
int ref_gemm_swiglu(const RadArgs* a) { return rad_compose_gemm_swiglu(a, ref_gemm, ref_swiglu); }

using radiance::pretend_card::row;

const RadConstraint c_float_weights[] = {RAD_CIN("wdtype", "f32 bf16 f16")};
// The caches the pretend card's attention reads: libref's row could serve an fp8 cache, but the
// pretend card declines it (as a card's library without an fp8 path would; libgpu has one since
// session 29), so the refusal path stays checked (test_kv_fp8.cpp).
const RadConstraint c_attn[] = {RAD_CEQ("block", 16), RAD_CIN("kv_dtype", "f32 bf16")};
const RadConstraint c_int_codes[] = {RAD_CIN("qtype", "i8 u8 i4 u4")};

#define ROW(name, op, fn, cons, ncons) \
    { name, op, op, "libref's " op " as a device row", "any", "f32 activations", RAD_DOMAIN_DEVICE, 0, cons, ncons, 0, row<fn> }

const RadKernelInfo rows[] = {
    ROW("fake_embed", "embed", ref_embed, c_float_weights, 1),
    ROW("fake_rms_norm", "rms_norm", ref_rms_norm, c_float_weights, 1),
    ROW("fake_layer_norm", "layer_norm", ref_layer_norm, c_float_weights, 1),
    ROW("fake_gemm", "gemm", ref_gemm, c_float_weights, 1),
    // no fp8: quantised_on_card.sh checks that an encoding a card has no row for is refused by name
    ROW("fake_gemm_q", "gemm_q", ref_gemm_q, c_int_codes, 1),
    ROW("fake_rope", "rope", ref_rope, nullptr, 0),
    ROW("fake_attention", "attention", ref_attention, c_attn, 2),
    ROW("fake_swiglu", "swiglu", ref_swiglu, nullptr, 0),
    ROW("fake_geglu", "geglu", ref_geglu, nullptr, 0),
    ROW("fake_gelu", "gelu", ref_gelu, nullptr, 0),
    ROW("fake_softcap", "softcap", ref_softcap, nullptr, 0),
    ROW("fake_add", "add", ref_add, nullptr, 0),
    ROW("fake_gather_rows", "gather_rows", ref_gather_rows, nullptr, 0),
    ROW("fake_argmax", "argmax", ref_argmax, nullptr, 0),
    ROW("fake_sample", "sample", ref_sample, nullptr, 0),
    ROW("fake_all_reduce_host", "all_reduce", ref_all_reduce, nullptr, 0),
    ROW("fake_all_gather_host", "all_gather", ref_all_gather, nullptr, 0),
    {"fake_add_rms_norm", "add_rms_norm", "add_rms_norm", "libref's add then rms_norm as a device row", "any", "f32 activations",
     RAD_DOMAIN_DEVICE, 0, c_float_weights, 1, 0, row<ref_add_rms_norm>, nullptr, nullptr, nullptr, nullptr, nullptr, "add,rms_norm"},
    {"fake_gemm_swiglu", "gemm_swiglu", "gemm_swiglu", "libref's gemm then swiglu as a device row", "any", "f32 activations",
     RAD_DOMAIN_DEVICE, 0, c_float_weights, 1, 0, row<ref_gemm_swiglu>, nullptr, nullptr, rad_compose_gemm_swiglu_scratch, nullptr, nullptr,
     "gemm,swiglu"},
};

// The faulty build (tests/fakedev/CMakeLists.txt, libfakedev_faulty) is the tests' own test: its
// replayed graphs skip their last launch, so a decode step returns the logits or tokens a step
// before it left behind, while prefill (never replayed) stays right.
#ifdef FAKEDEV_FAULT_SKIP_LAST_LAUNCH
const bool g_faulty = (radiance::pretend_card::g_skip_last_launch = true);
#endif

const RadDeviceApi g_api = radiance::pretend_card::api("fake", "pretend card (host memory)");

}  // namespace

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT

extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_KERNEL, "libfakedev", "0.1", "test card: libref's rows on host memory", "host"};
    return &info;
}
RAD_EXPORT const RadDeviceApi* rad_kernel_device(void) { return &g_api; }
RAD_CONVENTIONAL_KERNEL_EXPORTS(rows)
RAD_EXPORT int rad_kernel_collective(int i) {
    return i >= 0 && i < RAD_N_OF(rows) && (rows[i].launch == row<ref_all_reduce> || rows[i].launch == row<ref_all_gather>);
}
// The pretend card's graphs replay every launch, the host-staging barrier included, so all its rows
// count as queued: tensor-parallel decode steps get recorded (and tested) on it.
RAD_EXPORT int rad_kernel_queued(int i) { return i >= 0 && i < RAD_N_OF(rows); }
}
