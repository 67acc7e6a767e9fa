// serve_logits.h: a container served in process for the convert tests: the logits of a fixed
// 9-token prompt and of one decode step after it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "radiance/container/container.h"
#include "radiance/core/registry.h"
#include "radiance/engine/engine.h"

namespace convtest {

using namespace radiance;

// The container served by the build's plugins on `kernels` (a hierarchy, first preferred): 16
// tokens a step, one sequence of up to 64.
inline std::unique_ptr<engine::Engine> serve(const std::string& rad, const std::vector<std::string>& kernels) {
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    lo.kernels = kernels;
    auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
    engine::EngineOptions eo;
    eo.max_tok = 16;
    eo.max_seqs = 1;
    eo.max_ctx = 64;
    eo.max_out_rows = 16;
    eo.select.accept_reference = true;
    return engine::Engine::create(reg, std::shared_ptr<const container::Reader>(container::Reader::open(rad)), eo);
}

// The logits of a 9-token prompt, then of one decode step after it, on `kernels`; `report`
// receives the plan's selection report.
inline std::vector<float> logits(const std::string& rad, const std::vector<std::string>& kernels, std::string* report = nullptr) {
    auto eng = serve(rad, kernels);
    if (report) *report = eng->selection_report();
    std::vector<float> all, lg;
    engine::StepBatch b;
    b.tokens = {1, 17, 300, 42, 5, 99, 511, 7, 128};
    for (int32_t i = 0; i < 9; ++i) b.positions.push_back(i), b.out_ids.push_back(i);
    b.cu_seqlens = {0, 9};
    b.seq_ids = {0};
    b.block_tables = {0, 1, 2, 3};
    b.block_table_stride = 4;
    eng->step(b, lg);
    all = lg;
    engine::StepBatch d = b;
    d.tokens = {77};
    d.positions = {9};
    d.out_ids = {0};
    d.cu_seqlens = {0, 1};
    d.n_seq_decode = 1;
    eng->step(d, lg);
    all.insert(all.end(), lg.begin(), lg.end());
    return all;
}

}  // namespace convtest
