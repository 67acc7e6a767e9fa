// registry.h: loads the plugins on the search path and enforces the ABI law.
//
// Refused, with the plugin and both values named: an ABI version or layout fingerprint that
// differs from the engine's, two plugins with one name, two quantisers with one name, a kernel
// library declaring an op schema differently from the first library (in hierarchy order) that
// declared it. A plugin may decline the machine (rad_plugin_open -> RAD_E_UNSUPPORTED); that is
// recorded, not an error.
#pragma once
#include <radiance/arch/rad_arch.h>
#include <radiance/rad_plugin.h>
#include <radiance/rad_quant.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "radiance/core/search_path.h"

namespace radiance::core {

// One dlopen'ed shared object that passed the ABI checks.
class Plugin {
public:
    Plugin(std::string path, void* handle);
    ~Plugin();
    Plugin(const Plugin&) = delete;
    Plugin& operator=(const Plugin&) = delete;

    void* symbol(const char* name) const;  // nullptr if absent
    template <typename F>
    F fn(const char* name) const {
        return reinterpret_cast<F>(symbol(name));
    }

    std::string path;
    std::string name, version, description, build_target;
    int kind = 0;  // RadPluginKind

private:
    void* handle_;
};

struct KernelLibrary;

struct KernelRow {
    const RadKernelInfo* info = nullptr;
    const KernelLibrary* lib = nullptr;
    int index = 0;           // declaration order within the library
    bool reference = false;  // an oracle row
    bool concurrent = false;
    int collective = 0;
    bool queued = false;  // rad_kernel_queued: all its work stays on the device queue (graph-safe)
};

struct KernelLibrary {
    std::shared_ptr<Plugin> plugin;
    bool reference = false;  // rad_plugin_reference(): the whole library is an oracle
    std::vector<const RadOpSchema*> schemas;
    std::vector<KernelRow> rows;
    int rank = 0;                          // position in the hierarchy, 0 first
    const RadDeviceApi* device = nullptr;  // rad_kernel_device(): the card its device rows run on
};

struct ArchPlugin {
    std::shared_ptr<Plugin> plugin;
    std::string id, quant;
    RadArchDeclareFn declare = nullptr;
    RadArchStepFn step = nullptr;
};

struct QuantPlugin {
    std::shared_ptr<Plugin> plugin;
    std::vector<const RadQuantizerInfo*> quantizers;
};

// What happened to one file on the search path (rad-info --plugins prints these).
struct PluginRecord {
    PluginFile file;
    std::string name, version, kind, build_target;
    enum class Status { Loaded, Refused, Declined, Shadowed, NotSelected } status = Status::Loaded;
    std::string why;  // for anything but Loaded
    bool reference = false;
    std::string declarations;  // a one-line summary of what it declares
};

struct LoadOptions {
    std::vector<std::string> homes;                   // resolve_homes() if empty
    std::optional<std::vector<std::string>> kernels;  // --kernels / $RADIANCE_KERNELS order
    RadMachine machine{};                             // handed to rad_plugin_open
};

// $RADIANCE_KERNELS split on ',' (nullopt when unset or empty).
std::optional<std::vector<std::string>> kernels_from_env();

// What a tool's --radiance-home and --kernels ask for: `homes` through resolve_homes (empty: the
// defaults), `kernels` split on ',' (empty: $RADIANCE_KERNELS, or every library).
LoadOptions load_options(const std::string& homes, const std::string& kernels);

class Registry {
public:
    static Registry load(const LoadOptions& opts);

    // Kernel libraries in hierarchy order (first supplies an op's band; references last).
    const std::vector<KernelLibrary>& kernel_libraries() const { return kernels_; }
    const std::vector<ArchPlugin>& architectures() const { return archs_; }
    const std::vector<QuantPlugin>& quantizer_plugins() const { return quants_; }
    const std::vector<PluginRecord>& records() const { return records_; }
    const std::vector<std::string>& warnings() const { return warnings_; }
    // Refusals only (each message names the plugin, the file and both values).
    std::vector<std::string> refusals() const;

    // The schema that fixes `op` (the first declaring library's), or nullptr.
    const RadOpSchema* schema(const std::string& op) const;
    const KernelLibrary* schema_owner(const std::string& op) const;
    // The architecture for the exact (id, quant) pair; throws listing the known pairs otherwise.
    const ArchPlugin& arch(const std::string& id, const std::string& quant) const;
    const RadQuantizerInfo* quantizer(const std::string& name) const;
    // The first library in the hierarchy that brings a card (rad_kernel_device), or nullptr.
    const KernelLibrary* device_library() const;

private:
    std::vector<KernelLibrary> kernels_;
    std::vector<ArchPlugin> archs_;
    std::vector<QuantPlugin> quants_;
    std::vector<PluginRecord> records_;
    std::vector<std::string> warnings_;
};

// True if two schemas declare the same parameters and operands (names, types, roles, order).
bool same_schema(const RadOpSchema& a, const RadOpSchema& b, std::string* difference);

}  // namespace radiance::core
