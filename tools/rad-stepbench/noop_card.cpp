// libnoopcard: libnoop's do-nothing ops as the rows of a pretend card, plus an argmax row that
// picks one fixed token. It exists to measure what serving costs around the model (HTTP, the
// scheduler, the step transport, the worker's host work) the way a card serves it: the engine
// plans on the card, greedy rows are picked "on the card" and no logits travel back, as on the
// H200. The token is RADIANCE_NOOP_TOKEN (default 272, " the" in the demo model's tokenizer), so
// every streamed chunk carries text. RADIANCE_NOOP_STEP_US="BASE,PER_TOKEN" makes each step take
// BASE + PER_TOKEN x tokens microseconds (a sleep in the step's sync: on a card the host waits while
// the card works), so the scheduler sees steps as long as a real card's. Never installed into a
// serving home.
#include <radiance/kernels/pretend_card.h>
#include <radiance/rad_ops.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

int32_t fixed_token() {
    static const int32_t t = [] {
        const char* e = std::getenv("RADIANCE_NOOP_TOKEN");
        return e ? static_cast<int32_t>(std::atoi(e)) : 272;
    }();
    return t;
}

struct StepCost {
    double base_us = 0, per_token_us = 0;
};
const StepCost& step_cost() {
    static const StepCost c = [] {
        StepCost k;
        if (const char* e = std::getenv("RADIANCE_NOOP_STEP_US")) std::sscanf(e, "%lf,%lf", &k.base_us, &k.per_token_us);
        return k;
    }();
    return c;
}

int nothing(const RadArgs*) { return RAD_OK; }

// The step's token count, from the embedding launch (its ranged `n`, replayed with a graph too);
// the step's sync charges for it.
int64_t g_step_tokens = 0;

int embed_row(const RadArgs* a) {
    g_step_tokens = rad_args_geti(a, "n");
    return RAD_OK;
}

// The "card" is host memory, so the ids land where the engine reads them back.
int fixed_argmax(const RadArgs* a) {
    RadTensor* y = rad_arg_out(a, 1);
    if (!y) return RAD_E_ARG;
    const int64_t n = rad_args_geti(a, "n");
    auto* ids = static_cast<int32_t*>(y->data);
    for (int64_t i = 0; i < n; ++i) ids[i] = fixed_token();
    return RAD_OK;
}

void charge_step() {
    const StepCost& c = step_cost();
    const double us = g_step_tokens > 0 ? c.base_us + c.per_token_us * static_cast<double>(g_step_tokens) : 0.0;
    g_step_tokens = 0;
    if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(us)));
}

using radiance::pretend_card::row;

const RadConstraint c_block16[] = {RAD_CEQ("block", 16)};

#define ROW(op) \
    { "noopcard_" op, op, op, "nothing", "any", "any", RAD_DOMAIN_DEVICE, 0, nullptr, 0, 0, row<nothing> }

const RadKernelInfo rows[] = {
    {"noopcard_embed", "embed", "embed", "nothing", "any", "any", RAD_DOMAIN_DEVICE, 0, nullptr, 0, 0, row<embed_row>},
    ROW("rms_norm"),
    ROW("layer_norm"),
    ROW("gemm"),
    ROW("rope"),
    {"noopcard_attention", "attention", "attention", "nothing", "any", "any", RAD_DOMAIN_DEVICE, 0, c_block16, 1, 0, row<nothing>},
    ROW("swiglu"),
    ROW("geglu"),
    ROW("gelu"),
    ROW("add"),
    ROW("gather_rows"),
    ROW("all_reduce"),
    {"noopcard_argmax", "argmax", "argmax", "the fixed token", "any", "any", RAD_DOMAIN_DEVICE, 0, nullptr, 0, 0, row<fixed_argmax>},
};

// The pretend card of radiance/kernels/pretend_card.h, its sync charging the step's time.
const RadDeviceApi g_api = [] {
    radiance::pretend_card::g_on_sync = charge_step;
    return radiance::pretend_card::api("noop", "pretend card that computes nothing", 1, 1);
}();

}  // namespace

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT

extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_KERNEL, "libnoopcard", "0.1",
                                       "pretend card whose ops do nothing and whose argmax is one fixed token (serving overhead benchmark)",
                                       "host"};
    return &info;
}
RAD_EXPORT const RadDeviceApi* rad_kernel_device(void) { return &g_api; }
RAD_CONVENTIONAL_KERNEL_EXPORTS(rows)
}
