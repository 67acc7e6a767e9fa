// kernel_lib.h: a kernel library opened with dlopen for rad-avx-check and rad-cpubench: its
// schemas and rows, which rows accept a set of parameters, and libcpu's test switches.
#pragma once
#include <radiance/rad_plugin.h>

#include <map>
#include <string>
#include <vector>

namespace avxcheck {

// A parameter value as a case holds it (strings owned).
struct ParamValue {
    int type = RAD_P_INT;
    int64_t i = 0;
    double f = 0;
    std::string s;
    bool operator==(const ParamValue&) const = default;
};
using Params = std::map<std::string, ParamValue>;

class KernelLib {
public:
    // dlopen + ABI version check + rad_plugin_open; throws std::runtime_error with the reason.
    explicit KernelLib(const std::string& path);
    KernelLib(const KernelLib&) = delete;
    KernelLib& operator=(const KernelLib&) = delete;

    const std::string& name() const { return name_; }
    const RadOpSchema* schema(const std::string& op) const;
    std::vector<const RadKernelInfo*> rows(const std::string& op) const;
    // True when every constraint of `row` holds for `p`; fills the derived parameters the row
    // supplies (attention's block).
    bool accepts(const RadKernelInfo* row, const Params& p, Params* derived) const;

    // libcpu's switches (null in other libraries): ISA level (-1 when unsupported), thread count.
    int (*isa_force)(int) = nullptr;
    int (*par_force)(int) = nullptr;
    const char* (*isa_describe)() = nullptr;
    // rad_kernel_set_deterministic (optional in any library): --deterministic on or off.
    int (*set_deterministic)(int) = nullptr;

private:
    void* handle_ = nullptr;
    std::string name_;
    std::vector<const RadOpSchema*> schemas_;
    std::vector<const RadKernelInfo*> rows_;
};

}  // namespace avxcheck
