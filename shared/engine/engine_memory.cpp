// engine_memory.cpp: where the plan's memory comes from and how it is laid out.
// One job: owned bytes on the host or the card (Bytes), the card and its queue (plan_device), the
// activation arena and persistent buffers from buffer liveness, the KV cache sized from the
// attention block and what memory is left, and the step's staging area (two slots of fixed input
// regions, page-locked on the host and mirrored on the card). Every allocation the plan makes
// once at startup happens here, so a startup out of memory points at one place.
#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "arena.h"
#include "engine_impl.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::engine {

using detail::elem_bytes;

void detail::Bytes::alloc(uint64_t n) {
    reset();
    raw.reset(new uint8_t[n + 64]());
    data = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw.get()) + 63) & ~uintptr_t{63});
    size = n;
}

// On the card when `d` is set, else on the host; `what` names the use in the error.
void detail::Bytes::alloc_on(const RadDeviceApi* d, uint64_t n, const char* what) {
    if (!d) return alloc(n);
    reset();
    data = static_cast<uint8_t*>(d->alloc(n ? n : 1));
    if (!data) {
        uint64_t free_bytes = 0;
        d->mem_free(&free_bytes);
        throw Error(std::string("out of memory on the card for the ") + what + ": " + std::to_string(n) + " bytes asked, " +
                    std::to_string(free_bytes) + " free (" + d->last_error() + ")");
    }
    dev = d;
    size = n;
    if (n && d->fill(data, 0, n, nullptr) != RAD_OK) throw Error(std::string("cannot clear the ") + what + ": " + d->last_error());
}

void Engine::Impl::plan_device(const core::Registry& reg) {
    const std::string& p = opts.placement;
    if (p != "auto" && p != "host" && p != "device") throw Error("placement '" + p + "' is not one of auto, host, device");
    if (p == "host") return;
    const core::KernelLibrary* lib = reg.device_library();
    if (!lib) {
        if (p == "device")
            throw Error(
                "placement 'device' asked for a card, but no loaded kernel library brings one "
                "(rad-info --plugins lists which libraries declined this machine and why)");
        return;
    }
    dev = lib->device;
    stream = dev->stream_create();
    if (!stream) throw Error(std::string("cannot create a queue on the card: ") + dev->last_error());
    log::info("placing the plan on ", dev->runtime, " ", dev->name, " (card ", dev->ordinal, ", from kernel library '", lib->plugin->name,
              "')");
}

void Engine::Impl::device_check(int rc, const char* what) const {
    if (rc != RAD_OK) throw Error(std::string("the card failed ") + what + ": " + (dev ? dev->last_error() : "?"));
}

void Engine::Impl::plan_buffers() {
    std::vector<ArenaItem> items;
    std::vector<size_t> which;
    uint64_t persist_bytes = 0;
    std::vector<uint64_t> persist_off(decl.buffers.size(), 0);
    for (size_t i = 0; i < decl.buffers.size(); ++i) {
        const BufferDecl& b = decl.buffers[i];
        uint64_t n = elem_bytes(b.d.dtype);
        for (int d = 0; d < b.d.rank; ++d) n *= static_cast<uint64_t>(b.d.shape[d]);
        if (b.d.kind == RAD_BUF_PERSIST) {
            persist_off[i] = persist_bytes;
            persist_bytes += (n + 255) / 256 * 256;
            continue;
        }
        ArenaItem it;
        it.bytes = n;
        // An undeclared use is assumed live for the whole program; the logits and the pooled rows
        // outlive the step.
        bool whole = b.first_use < 0 || static_cast<rad_buf>(i) == decl.logits || static_cast<rad_buf>(i) == decl.pooled;
        it.first = whole ? 0 : b.first_use;
        it.last = whole ? INT_MAX : b.last_use;
        items.push_back(it);
        which.push_back(i);
    }
    uint64_t total = plan_arena(items);
    arena.alloc_on(dev, total, "activation arena");
    persist.alloc_on(dev, persist_bytes, "persistent buffers");
    buf_base.assign(decl.buffers.size(), nullptr);
    for (size_t k = 0; k < items.size(); ++k) buf_base[which[k]] = arena.data + items[k].offset;
    for (size_t i = 0; i < decl.buffers.size(); ++i)
        if (decl.buffers[i].d.kind == RAD_BUF_PERSIST) buf_base[i] = persist.data + persist_off[i];
}

// Memory the KV cache may take when --kv-blocks is not given: EngineOptions::kv_memory_bytes when
// set (a fixed budget, the same on any machine). Otherwise, on a card: what is free now (weights
// and buffers are placed), less the share memory_utilization leaves to other processes and a
// reserve for what is allocated after the cache (kernel scratch, staging, decode graphs: 5% of
// the card, at most 1 GiB). On the host: half of MemAvailable.
uint64_t Engine::Impl::kv_budget() const {
    if (opts.kv_memory_bytes > 0) return opts.kv_memory_bytes;
    if (dev) {
        const uint64_t kReserve = std::min<uint64_t>(1ull << 30, dev->memory_bytes / 20);
        uint64_t free_bytes = 0;
        if (dev->mem_free(&free_bytes) != RAD_OK) throw Error(std::string("cannot read the card's free memory: ") + dev->last_error());
        const double util = opts.memory_utilization;
        if (!(util > 0 && util <= 1)) throw Error("memory utilization " + std::to_string(util) + " is not in (0, 1]");
        const auto others = static_cast<uint64_t>((1.0 - util) * static_cast<double>(dev->memory_bytes));
        return free_bytes > others + kReserve ? free_bytes - others - kReserve : 0;
    }
    std::ifstream meminfo("/proc/meminfo");
    for (std::string key; meminfo >> key;) {
        uint64_t kib = 0;
        meminfo >> kib;
        if (key == "MemAvailable:") return kib * 1024 / 2;
        meminfo.ignore(256, '\n');
    }
    return UINT64_MAX;  // not Linux: no bound known
}

void Engine::Impl::plan_kv() {
    if (decl.kv_groups.empty()) return;
    if (block <= 0) throw Error("the model declares KV groups but no attention kernel fixed a block size");
    uint64_t block_bytes = 0;  // one block in every layer of every group, every plane (scales too)
    for (const auto& g : decl.kv_groups) block_bytes += g.layers.size() * kv_layer_block_bytes(g.d, block);
    const int64_t per_seq = (opts.max_ctx + block - 1) / block;
    const int64_t wanted = per_seq * opts.max_seqs;
    blocks = opts.kv_blocks;
    if (blocks <= 0) {
        const uint64_t fit = block_bytes ? kv_budget() / block_bytes : UINT64_MAX;
        blocks = static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(wanted), fit));
        if (blocks < wanted)
            log::info("KV cache: ", blocks, " blocks of ", block, " tokens fit in memory (", opts.max_seqs, " sequences of ", opts.max_ctx,
                      " would need ", wanted, ")");
        if (blocks < 1) throw Error("no memory is left for the KV cache (one block needs " + std::to_string(block_bytes) + " bytes)");
    }
    kv.resize(decl.kv_groups.size());
    for (size_t g = 0; g < decl.kv_groups.size(); ++g) {
        const RadKvGroupDecl& d = decl.kv_groups[g].d;
        kv[g].resize(decl.kv_groups[g].layers.size());
        for (auto& planes : kv[g])
            for (int p = 0; p < kv_plane_count(d); ++p) {
                const uint64_t bytes = static_cast<uint64_t>(blocks) * block * kv_plane_token_bytes(d, p);
                planes[static_cast<size_t>(p)].alloc_on(dev, bytes, p < 2 ? "KV cache" : "KV cache scales");
                kv_total += bytes;
            }
    }
}

void Engine::Impl::plan_staging() {
    stage_stride = block > 0 ? (opts.max_ctx + block - 1) / block : 1;
    uint64_t at = 0;
    auto region = [&](StageRegion& r, int64_t n_i32) {
        r.off = at;
        at += (static_cast<uint64_t>(n_i32) * 4 + 255) / 256 * 256;
    };
    region(st_cu, opts.max_seqs + 1);
    region(st_seq, opts.max_seqs);
    region(st_q, opts.max_seqs);
    region(st_ctx, opts.max_seqs);
    region(st_out, max_out);
    region(st_hid, pooled_cap);  // embeddings' rows (hidden_ids)
    region(st_ids, max_out);
    region(st_cfg, 4 * max_out);  // sample's settings: f32 [rows, 4]
    region(st_u, 2 * max_out);    // and its draws: f64 [rows]
    region(st_tokens, opts.max_tok);
    region(st_pos, opts.max_tok);
    region(st_bt, static_cast<int64_t>(opts.max_seqs) * stage_stride);  // copies of the inputs stop where the tables do
    mask_words = (vocab + 31) / 32;
    if (pick_mask) region(st_mask, max_out * mask_words);  // copied on its own, by constrained steps only
    stage_bytes = at;
    stage_host = static_cast<uint8_t*>(dev->alloc_host(2 * stage_bytes));
    logits_h = static_cast<float*>(dev->alloc_host(static_cast<uint64_t>(max_out * vocab) * 4));
    if (!stage_host || !logits_h) throw Error(std::string("cannot lock host memory for the step's inputs: ") + dev->last_error());
    if (pooled_cap > 0) {  // embeddings: the pooled rows come back here
        const BufferDecl& pd = decl.buffers[decl.pooled];
        pooled_h = static_cast<uint8_t*>(dev->alloc_host(static_cast<uint64_t>(pooled_cap * pooled_width) * elem_bytes(pd.d.dtype)));
        if (!pooled_h) throw Error(std::string("cannot lock host memory for the pooled rows: ") + dev->last_error());
    }
    std::memset(stage_host, 0, 2 * stage_bytes);
    stage_dev.alloc_on(dev, 2 * stage_bytes, "step inputs");
    if (dev->mark_create && dev->mark_record && dev->mark_wait && dev->mark_destroy)
        for (void*& mk : marks)
            if (!(mk = dev->mark_create())) throw Error(std::string("cannot create a queue mark: ") + dev->last_error());
    use_slot(0);
}

}  // namespace radiance::engine
