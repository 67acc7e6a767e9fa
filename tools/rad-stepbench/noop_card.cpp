// libnoopcard: libnoop's do-nothing ops as the rows of a pretend card, plus an argmax row that
// picks one fixed token. It exists to measure what serving costs around the model (HTTP, the
// scheduler, the step transport, the worker's host work) the way a card serves it: the engine
// plans on the card, greedy rows are picked "on the card" and no logits travel back, as on the
// H200. The token is RADIANCE_NOOP_TOKEN (default 272, " the" in the demo model's tokenizer), so
// every streamed chunk carries text. RADIANCE_NOOP_STEP_US="BASE,PER_TOKEN" makes each step take
// BASE + PER_TOKEN x tokens microseconds of the card's time (a clock the card keeps: a step queued
// behind another starts when that one ends; the host sleeps in a sync or a mark's wait until the
// work it waits for is done), so the scheduler sees steps as long as a real card's, pipelined or
// not. Never installed into a serving home.
#include <radiance/kernels/pretend_card.h>
#include <radiance/rad_ops.h>

#include <algorithm>
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

// The card's clock: when the work queued on it so far is done. A step's work is queued by its
// embedding launch (its ranged `n` is the step's tokens; replayed with a graph too) and takes
// its cost after whatever was queued before it, so two steps queued back to back (pipelined:
// Engine::enqueue) run one after the other while the host goes on, as on a card.
using Clock = std::chrono::steady_clock;
Clock::time_point g_busy_until{};

// How busy the card was: at exit (a worker told to shut down), the steps it ran and their share of
// the time from the first step's start to the last one's end, on stderr (the server's log). What
// the host's turnaround between steps left idle is the rest.
struct BusyReport {
    int64_t steps = 0;
    double busy_us = 0;
    Clock::time_point first{};
    ~BusyReport() {
        if (steps == 0 || busy_us <= 0) return;
        const double span_us = std::chrono::duration<double, std::micro>(g_busy_until - first).count();
        std::fprintf(stderr, "libnoopcard: %lld steps, the card busy %.1f%% of %.2f s\n", static_cast<long long>(steps),
                     100.0 * busy_us / span_us, span_us / 1e6);
    }
} g_report;

int embed_row(const RadArgs* a) {
    const StepCost& c = step_cost();
    const int64_t tokens = rad_args_geti(a, "n");
    const double us = tokens > 0 ? c.base_us + c.per_token_us * static_cast<double>(tokens) : 0.0;
    const Clock::time_point start = std::max(Clock::now(), g_busy_until);
    g_busy_until = start + std::chrono::microseconds(static_cast<int64_t>(us));
    if (g_report.steps++ == 0) g_report.first = start;
    g_report.busy_us += us;
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

// The host waits for the card: until the work queued before a sync, or before a mark was
// recorded, is done.
void wait_until(Clock::time_point t) { std::this_thread::sleep_until(t); }
void wait_for_card() { wait_until(g_busy_until); }
void* mark_create() { return new Clock::time_point{}; }
void mark_destroy(void* m) { delete static_cast<Clock::time_point*>(m); }
int mark_record(void* m, RadStream) {
    *static_cast<Clock::time_point*>(m) = g_busy_until;
    return RAD_OK;
}
int mark_wait(void* m) {
    wait_until(*static_cast<Clock::time_point*>(m));
    return RAD_OK;
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

// The pretend card of radiance/kernels/pretend_card.h, its sync and marks waiting on the card's clock.
const RadDeviceApi g_api = [] {
    radiance::pretend_card::g_on_sync = wait_for_card;
    RadDeviceApi d = radiance::pretend_card::api("noop", "pretend card that computes nothing", 1, 1);
    d.mark_create = mark_create;
    d.mark_destroy = mark_destroy;
    d.mark_record = mark_record;
    d.mark_wait = mark_wait;
    return d;
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
