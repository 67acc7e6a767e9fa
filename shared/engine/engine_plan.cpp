// engine_plan.cpp: the plan's ops, from the declaration's resolutions to what a launch needs.
// One job: every resolved op becomes launch bands (the winning kernel row of each band, its
// parameters in stable storage, its derived values), the KV block size the attention rows fixed is
// agreed, and each band's kernel state and scratch are made. A plan that cannot run fails here,
// at startup, naming the op, rather than on the first step.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine_impl.h"
#include "radiance/util/error.h"

namespace radiance::engine {

void Engine::Impl::plan_ops() {
    std::vector<std::string> errors;
    ops.resize(decl.ops.size());
    for (size_t i = 0; i < decl.ops.size(); ++i) {
        const OpDecl& d = decl.ops[i];
        if (!d.res.ok()) {
            if (!d.queried) errors.push_back("op " + std::to_string(i) + " '" + d.geom.op + "': " + d.res.error);
            continue;
        }
        PlannedOp& p = ops[i];
        for (auto& [k, v] : d.geom.params) {
            p.names.push_back(k);
            p.values.push_back(v);
        }
        if (!d.geom.ranged.empty()) {
            p.ranged_index = static_cast<int>(p.names.size());
            p.names.push_back(d.geom.ranged);
            p.values.push_back(core::ParamValue::of_int(d.geom.hi));
        }
        for (auto& band : d.res.bands) {
            LaunchBand lb;
            lb.row = band.winner;
            if (lb.row && lb.row->collective && !lb.row->queued) collectives_on_queue = false;  // it waits on the host
            for (auto& [k, v] : band.derived) {
                lb.derived_names.push_back(k);
                lb.derived_vals.push_back(core::ParamValue::of_int(v));
            }
            p.bands.push_back(std::move(lb));
        }
    }
    if (!errors.empty()) {
        std::string msg = "the plan has ops no kernel row serves (is a kernel library for this machine installed?):";
        for (auto& e : errors) msg += "\n  " + e;
        throw Error(msg);
    }
    for (auto& op : decl.ops)
        for (auto& band : op.res.bands)
            if (auto it = band.derived.find("block"); it != band.derived.end()) {
                if (block && block != it->second)
                    throw Error("attention kernels disagree on the KV block size (" + std::to_string(block) + " vs " +
                                std::to_string(it->second) + ")");
                block = static_cast<int>(it->second);
            }
}

// Per-band kernel state and scratch, sized from the band's upper bound. Launches run one after
// another on one queue, so every band's scratch is the same bytes, sized for the largest.
void Engine::Impl::plan_kernel_state() {
    uint64_t scratch_max = 0;
    for (size_t i = 0; i < ops.size(); ++i)
        for (size_t b = 0; b < ops[i].bands.size(); ++b) {
            LaunchBand& lb = ops[i].bands[b];
            if (!lb.row || (!lb.row->info->init && !lb.row->info->scratch)) continue;
            std::vector<RadParam> ps;
            for (size_t k = 0; k < ops[i].names.size(); ++k) {
                RadParam q{};
                q.name = ops[i].names[k].c_str();
                q.type = ops[i].values[k].type;
                q.i = static_cast<int>(k) == ops[i].ranged_index ? decl.ops[i].res.bands[b].hi : ops[i].values[k].i;
                q.f = ops[i].values[k].f;
                q.s = ops[i].values[k].s.c_str();
                ps.push_back(q);
            }
            RadArgs geom{};
            geom.p = ps.data();
            geom.n_p = static_cast<int32_t>(ps.size());
            geom.rank = opts.rank;
            geom.world_size = opts.world_size;
            geom.stream = stream;
            if (lb.row->info->scratch) {
                lb.scratch_bytes = lb.row->info->scratch(&geom);
                scratch_max = std::max(scratch_max, lb.scratch_bytes);
            }
            if (lb.row->info->init && lb.row->info->init(&geom, &lb.instance) != RAD_OK)
                throw Error(std::string("kernel ") + lb.row->info->name + " failed to initialise for op '" + decl.ops[i].geom.op + "'");
        }
    scratch.alloc_on(dev, scratch_max, "kernel scratch");
}

}  // namespace radiance::engine
