// registry.cpp: scanning, loading and refusing plugins; the kernel hierarchy; op schemas.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "radiance/core/registry.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"

namespace radiance::core {
namespace {

using Status = PluginRecord::Status;

std::string hex(uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%016llx", static_cast<unsigned long long>(v));
    return b;
}

const char* kind_name(int k) {
    switch (k) {
    case RAD_PLUGIN_KERNEL: return "kernels";
    case RAD_PLUGIN_ARCH: return "architecture";
    case RAD_PLUGIN_QUANT: return "quantizer";
    }
    return "unknown";
}

int dir_kind(PluginDir d) {
    switch (d) {
    case PluginDir::Kernels: return RAD_PLUGIN_KERNEL;
    case PluginDir::Architectures: return RAD_PLUGIN_ARCH;
    case PluginDir::Quantizers: return RAD_PLUGIN_QUANT;
    }
    return 0;
}

// "libref.so" -> "ref"; the forms a --kernels entry may use to name a library.
std::string stem(const std::string& filename) {
    std::string s = filename;
    if (str::ends_with(s, ".so")) s.resize(s.size() - 3);
    if (str::starts_with(s, "lib")) s = s.substr(3);
    return s;
}

bool entry_names(const std::string& entry, const KernelLibrary& lib) {
    const std::string& path = lib.plugin->path;
    std::string file = std::filesystem::path(path).filename().string();
    std::string bare = str::ends_with(entry, ".so") ? entry.substr(0, entry.size() - 3) : entry;
    if (entry == lib.plugin->name || entry == file || entry == path) return true;
    if (stem(file) == bare || file == bare || ("lib" + bare + ".so") == file) return true;
    if (stem(file) == stem(bare + ".so")) return true;  // "libref" and "ref" both name libref.so
    std::error_code ec;
    return entry.find('/') != std::string::npos && std::filesystem::equivalent(entry, path, ec);
}

struct Loaded {
    std::shared_ptr<Plugin> plugin;
    size_t record;
};

}  // namespace

std::optional<std::vector<std::string>> kernels_from_env() {
    const char* e = std::getenv("RADIANCE_KERNELS");
    if (!e || !*e) return std::nullopt;
    return str::split(e, ",");
}

LoadOptions load_options(const std::string& homes, const std::string& kernels) {
    LoadOptions lo;
    lo.homes = resolve_homes(homes);
    lo.kernels = kernels.empty() ? kernels_from_env() : std::optional(str::split(kernels, ","));
    return lo;
}

Registry Registry::load(const LoadOptions& opts) {
    Registry reg;
    std::vector<std::string> homes = opts.homes.empty() ? resolve_homes("") : opts.homes;
    std::map<std::string, std::string> name_owner;  // plugin name -> file
    std::vector<Loaded> kernel_plugins, arch_plugins, quant_plugins;

    for (const PluginFile& f : scan_plugins(homes)) {
        PluginRecord rec;
        rec.file = f;
        rec.kind = kind_name(dir_kind(f.dir));
        auto refuse = [&](const std::string& why) {
            rec.status = Status::Refused;
            rec.why = why;
            log::error("refused plugin ", f.path, ": ", why);
            reg.records_.push_back(rec);
        };
        if (!f.shadowed_by.empty()) {
            rec.status = Status::Shadowed;
            rec.why = "shadowed by " + f.shadowed_by;
            reg.records_.push_back(rec);
            continue;
        }
        void* h = dlopen(f.path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char* err = dlerror();
            refuse(std::string("cannot load: ") + (err ? err : "unknown dlopen error"));
            continue;
        }
        auto plugin = std::make_shared<Plugin>(f.path, h);
        std::string label = "plugin " + f.filename;
        auto ver = plugin->fn<RadAbiVersionFn>("rad_plugin_abi_version");
        auto lay = plugin->fn<RadAbiLayoutFn>("rad_plugin_abi_layout");
        auto inf = plugin->fn<RadPluginInfoFn>("rad_plugin_info");
        if (!ver || !lay || !inf) {
            refuse(label + " does not export rad_plugin_abi_version, rad_plugin_abi_layout and rad_plugin_info");
            continue;
        }
        if (ver() != RAD_ABI_VERSION) {
            refuse(label + ": ABI version " + std::to_string(ver()) + " differs from the engine's " + std::to_string(RAD_ABI_VERSION) +
                   " (rebuild it against this radiance)");
            continue;
        }
        constexpr uint64_t engine_layout = RAD_ABI_LAYOUT_FINGERPRINT;
        if (lay() != engine_layout) {
            refuse(label + ": ABI layout fingerprint " + hex(lay()) + " differs from the engine's " + hex(engine_layout) +
                   " (built against other headers with the same version number)");
            continue;
        }
        const RadPluginInfo* info = inf();
        if (!info || !info->name || !*info->name) {
            refuse(label + ": rad_plugin_info() gives no name");
            continue;
        }
        plugin->name = info->name;
        plugin->version = info->version ? info->version : "";
        plugin->description = info->description ? info->description : "";
        plugin->build_target = info->build_target ? info->build_target : "";
        plugin->kind = info->kind;
        rec.name = plugin->name;
        rec.version = plugin->version;
        rec.build_target = plugin->build_target;
        label = "plugin '" + plugin->name + "' (" + f.path + ")";
        if (info->kind != dir_kind(f.dir)) {
            refuse(label + " is a " + kind_name(info->kind) + " plugin in a " + plugin_dir_name(f.dir) + "/ directory");
            continue;
        }
        if (auto it = name_owner.find(plugin->name); it != name_owner.end()) {
            refuse("two plugins are named '" + plugin->name + "': " + f.path + " and " + it->second +
                   " (the first found wins; rename one)");
            continue;
        }
        if (auto open = plugin->fn<RadPluginOpenFn>("rad_plugin_open")) {
            RadMachine m = opts.machine;
            m.struct_size = sizeof m;
            int rc = open(&m);
            if (rc == RAD_E_UNSUPPORTED) {
                rec.status = Status::Declined;
                rec.why = "declined this machine (rad_plugin_open returned RAD_E_UNSUPPORTED)";
                log::info(label, " ", rec.why);
                reg.records_.push_back(rec);
                continue;
            }
            if (rc != RAD_OK) {
                refuse(label + ": rad_plugin_open failed with status " + std::to_string(rc));
                continue;
            }
        }
        name_owner[plugin->name] = f.path;
        reg.records_.push_back(rec);
        Loaded l{plugin, reg.records_.size() - 1};
        if (info->kind == RAD_PLUGIN_KERNEL)
            kernel_plugins.push_back(l);
        else if (info->kind == RAD_PLUGIN_ARCH)
            arch_plugins.push_back(l);
        else
            quant_plugins.push_back(l);
    }

    auto refuse_loaded = [&](size_t record, const std::string& why) {
        reg.records_[record].status = Status::Refused;
        reg.records_[record].why = why;
        log::error("refused plugin ", reg.records_[record].file.path, ": ", why);
    };

    // ---- architectures: exported entry points, and one plugin per (id, quant) ----
    std::map<std::pair<std::string, std::string>, std::string> pair_owner;
    for (auto& l : arch_plugins) {
        auto id = l.plugin->fn<RadArchIdFn>("rad_arch_id");
        auto qu = l.plugin->fn<RadArchQuantFn>("rad_arch_quant");
        auto de = l.plugin->fn<RadArchDeclareFn>("rad_arch_declare");
        auto st = l.plugin->fn<RadArchStepFn>("rad_arch_step");
        std::string label = "architecture plugin '" + l.plugin->name + "' (" + l.plugin->path + ")";
        if (!id || !qu || !de || !st) {
            refuse_loaded(l.record, label + " lacks rad_arch_id, rad_arch_quant, rad_arch_declare or rad_arch_step");
            continue;
        }
        ArchPlugin a{l.plugin, id() ? id() : "", qu() ? qu() : "", de, st};
        auto key = std::make_pair(a.id, a.quant);
        if (auto it = pair_owner.find(key); it != pair_owner.end()) {
            refuse_loaded(l.record, label + " serves (" + a.id + ", \"" + a.quant + "\") which '" + it->second + "' already serves");
            continue;
        }
        pair_owner[key] = l.plugin->name;
        reg.records_[l.record].declarations = "arch id '" + a.id + "', quant \"" + a.quant + "\"";
        reg.archs_.push_back(std::move(a));
    }

    // ---- quantisers: names unique across plugins ----
    std::map<std::string, std::string> quant_owner;
    for (auto& l : quant_plugins) {
        auto cnt = l.plugin->fn<RadQuantCountFn>("rad_quant_count");
        auto at = l.plugin->fn<RadQuantAtFn>("rad_quant_at");
        std::string label = "quantizer plugin '" + l.plugin->name + "' (" + l.plugin->path + ")";
        if (!cnt || !at) {
            refuse_loaded(l.record, label + " lacks rad_quant_count or rad_quant_at");
            continue;
        }
        QuantPlugin q{l.plugin, {}};
        std::string clash;
        for (int i = 0; i < cnt(); ++i) {
            const RadQuantizerInfo* qi = at(i);
            if (!qi || !qi->name) continue;
            if (auto it = quant_owner.find(qi->name); it != quant_owner.end()) {
                clash = "two plugins name the quantiser '" + std::string(qi->name) + "': '" + l.plugin->name + "' (" + l.plugin->path +
                        ") and '" + it->second + "'";
                break;
            }
            q.quantizers.push_back(qi);
        }
        if (!clash.empty()) {
            refuse_loaded(l.record, clash);
            continue;
        }
        std::vector<std::string> names;
        for (auto* qi : q.quantizers) {
            quant_owner[qi->name] = l.plugin->name + " (" + l.plugin->path + ")";
            names.push_back(qi->name);
        }
        reg.records_[l.record].declarations = "quantizers: " + str::join(names, ", ");
        reg.quants_.push_back(std::move(q));
    }

    // ---- kernel libraries: rows, reference status, hierarchy, schemas ----
    std::vector<KernelLibrary> libs;
    std::vector<size_t> lib_record;
    for (auto& l : kernel_plugins) {
        auto sc = l.plugin->fn<RadSchemaCountFn>("rad_kernel_schema_count");
        auto sa = l.plugin->fn<RadSchemaAtFn>("rad_kernel_schema_at");
        auto kc = l.plugin->fn<RadKernelCountFn>("rad_kernel_count");
        auto ka = l.plugin->fn<RadKernelAtFn>("rad_kernel_at");
        if (!sc || !sa || !kc || !ka) {
            refuse_loaded(l.record, "kernel library '" + l.plugin->name + "' (" + l.plugin->path +
                                        ") lacks rad_kernel_schema_count/at or rad_kernel_count/at");
            continue;
        }
        KernelLibrary lib;
        lib.plugin = l.plugin;
        if (auto r = l.plugin->fn<RadPluginReferenceFn>("rad_plugin_reference")) lib.reference = r() != 0;
        if (auto dev = l.plugin->fn<RadDeviceApiFn>("rad_kernel_device")) {
            const RadDeviceApi* api = dev();
            if (api && api->struct_size >= sizeof(RadDeviceApi)) lib.device = api;
        }
        for (int i = 0; i < sc(); ++i)
            if (const RadOpSchema* s = sa(i); s && s->name) lib.schemas.push_back(s);
        auto conc = l.plugin->fn<RadKernelFlagFn>("rad_kernel_concurrent");
        auto coll = l.plugin->fn<RadKernelFlagFn>("rad_kernel_collective");
        auto kref = l.plugin->fn<RadKernelFlagFn>("rad_kernel_reference");
        auto queued = l.plugin->fn<RadKernelFlagFn>("rad_kernel_queued");
        for (int i = 0; i < kc(); ++i) {
            const RadKernelInfo* k = ka(i);
            if (!k || !k->op || !k->launch) continue;
            KernelRow row;
            row.info = k;
            row.index = i;
            row.reference = lib.reference || (kref && kref(i) != 0);
            row.concurrent = conc && conc(i) != 0;
            row.collective = coll ? coll(i) : 0;
            row.queued = queued && queued(i) != 0;
            lib.rows.push_back(row);
        }
        libs.push_back(std::move(lib));
        lib_record.push_back(l.record);
    }

    // Hierarchy: --kernels order (unnamed libraries are not loaded), else non-reference libraries
    // by name; reference libraries rank below every other library either way.
    std::vector<size_t> order;
    if (opts.kernels) {
        for (const auto& entry : *opts.kernels) {
            bool hit = false;
            for (size_t i = 0; i < libs.size(); ++i)
                if (entry_names(entry, libs[i])) {
                    hit = true;
                    if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
                }
            if (!hit) {
                std::string w = "--kernels entry '" + entry + "' matches no kernel library on the search path";
                log::warn(w);
                reg.warnings_.push_back(w);
            }
        }
        for (size_t i = 0; i < libs.size(); ++i)
            if (std::find(order.begin(), order.end(), i) == order.end()) {
                reg.records_[lib_record[i]].status = Status::NotSelected;
                reg.records_[lib_record[i]].why = "not named by --kernels";
            }
    } else {
        for (size_t i = 0; i < libs.size(); ++i) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return libs[a].plugin->name < libs[b].plugin->name; });
    }
    std::stable_partition(order.begin(), order.end(), [&](size_t i) { return !libs[i].reference; });

    std::map<std::string, std::pair<const RadOpSchema*, std::string>> fixed;  // op -> schema, owner label
    for (size_t i : order) {
        KernelLibrary& lib = libs[i];
        std::string label = "'" + lib.plugin->name + "' (" + lib.plugin->path + ")";
        std::string conflict;
        std::map<std::string, const RadOpSchema*> mine;
        for (const RadOpSchema* s : lib.schemas) {
            std::string diff;
            auto it = fixed.find(s->name);
            if (it != fixed.end() && !same_schema(*it->second.first, *s, &diff)) {
                conflict = "kernel library " + label + " declares op '" + s->name + "' differently from " + it->second.second +
                           ", which declared it first: " + diff;
                break;
            }
            if (auto m = mine.find(s->name); m != mine.end() && !same_schema(*m->second, *s, &diff)) {
                conflict = "kernel library " + label + " declares op '" + s->name + "' twice, differently: " + diff;
                break;
            }
            mine[s->name] = s;
        }
        if (!conflict.empty()) {
            refuse_loaded(lib_record[i], conflict);
            continue;
        }
        for (auto& [name, s] : mine) fixed.emplace(name, std::make_pair(s, label));
        lib.rank = static_cast<int>(reg.kernels_.size());
        reg.kernels_.push_back(std::move(lib));
        size_t rec = lib_record[i];
        reg.records_[rec].reference = reg.kernels_.back().reference;
        reg.records_[rec].declarations = std::to_string(reg.kernels_.back().schemas.size()) + " op schemas, " +
                                         std::to_string(reg.kernels_.back().rows.size()) + " kernel rows";
    }
    // Rows point at their library only now that the vector no longer moves.
    for (auto& lib : reg.kernels_) {
        std::vector<KernelRow> kept;
        for (auto& row : lib.rows) {
            row.lib = &lib;
            if (!fixed.count(row.info->op)) {
                std::string w = "kernel row '" + std::string(row.info->name ? row.info->name : "?") + "' of '" + lib.plugin->name +
                                "' implements op '" + row.info->op + "' which no library declares; ignored";
                log::warn(w);
                reg.warnings_.push_back(w);
                continue;
            }
            kept.push_back(row);
        }
        lib.rows = std::move(kept);
    }
    return reg;
}

std::vector<std::string> Registry::refusals() const {
    std::vector<std::string> out;
    for (auto& r : records_)
        if (r.status == Status::Refused) out.push_back(r.why);
    return out;
}

const KernelLibrary* Registry::schema_owner(const std::string& op) const {
    for (auto& lib : kernels_)
        for (auto* s : lib.schemas)
            if (op == s->name) return &lib;
    return nullptr;
}

const RadOpSchema* Registry::schema(const std::string& op) const {
    for (auto& lib : kernels_)
        for (auto* s : lib.schemas)
            if (op == s->name) return s;
    return nullptr;
}

const ArchPlugin& Registry::arch(const std::string& id, const std::string& quant) const {
    for (auto& a : archs_)
        if (a.id == id && a.quant == quant) return a;
    std::vector<std::string> known;
    for (auto& a : archs_) known.push_back("(" + a.id + ", \"" + a.quant + "\")");
    std::sort(known.begin(), known.end());
    throw Error("no architecture plugin serves (" + id + ", \"" + quant +
                "\"); known: " + (known.empty() ? std::string("none") : str::join(known, ", ")));
}

const RadQuantizerInfo* Registry::quantizer(const std::string& name) const {
    for (auto& q : quants_)
        for (auto* qi : q.quantizers)
            if (name == qi->name) return qi;
    return nullptr;
}

const KernelLibrary* Registry::device_library() const {
    for (auto& k : kernels_)
        if (k.device) return &k;
    return nullptr;
}

}  // namespace radiance::core
