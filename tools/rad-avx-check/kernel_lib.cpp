#include "kernel_lib.h"

#include "radiance/core/constraint.h"

#include <dlfcn.h>

#include <cstring>
#include <stdexcept>
#include <string_view>

namespace avxcheck {
namespace {

template <typename F>
F sym(void* h, const char* name) {
    return reinterpret_cast<F>(dlsym(h, name));
}

}  // namespace

KernelLib::KernelLib(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error("cannot load " + path + ": " + dlerror());
    auto ver = sym<RadAbiVersionFn>(handle_, "rad_plugin_abi_version");
    auto info = sym<RadPluginInfoFn>(handle_, "rad_plugin_info");
    auto sc = sym<RadSchemaCountFn>(handle_, "rad_kernel_schema_count");
    auto sa = sym<RadSchemaAtFn>(handle_, "rad_kernel_schema_at");
    auto kc = sym<RadKernelCountFn>(handle_, "rad_kernel_count");
    auto ka = sym<RadKernelAtFn>(handle_, "rad_kernel_at");
    if (!ver || !info || !sc || !sa || !kc || !ka) throw std::runtime_error(path + " is not a kernel library");
    if (ver() != RAD_ABI_VERSION) throw std::runtime_error(path + " was built for another ABI version");
    name_ = info()->name ? info()->name : path;
    if (auto open = sym<RadPluginOpenFn>(handle_, "rad_plugin_open")) {
        RadMachine m{};
        m.struct_size = sizeof m;
        if (int rc = open(&m); rc != RAD_OK) throw std::runtime_error(path + ": rad_plugin_open returned " + std::to_string(rc));
    }
    for (int i = 0; i < sc(); ++i)
        if (auto* s = sa(i)) schemas_.push_back(s);
    for (int i = 0; i < kc(); ++i)
        if (auto* r = ka(i); r && r->op && r->launch) rows_.push_back(r);
    isa_force = sym<int (*)(int)>(handle_, "avx_isa_force");
    par_force = sym<int (*)(int)>(handle_, "avx_par_force");
    isa_describe = sym<const char* (*)()>(handle_, "avx_isa_describe");
    set_deterministic = sym<int (*)(int)>(handle_, "rad_kernel_set_deterministic");
}

const RadOpSchema* KernelLib::schema(const std::string& op) const {
    for (auto* s : schemas_)
        if (op == s->name) return s;
    return nullptr;
}

std::vector<const RadKernelInfo*> KernelLib::rows(const std::string& op) const {
    std::vector<const RadKernelInfo*> out;
    for (auto* r : rows_)
        if (op == r->op) out.push_back(r);
    return out;
}

bool KernelLib::accepts(const RadKernelInfo* row, const Params& p, Params* derived) const {
    const RadOpSchema* s = schema(row->op);
    for (int i = 0; i < row->n_constraints; ++i) {
        const RadConstraint& c = row->constraints[i];
        auto it = p.find(c.key);
        if (it == p.end()) {
            bool is_derived = false;
            for (int j = 0; s && j < s->n_params; ++j)
                if (!std::strcmp(s->params[j].name, c.key)) is_derived = s->params[j].need == RAD_DERIVED;
            if (!is_derived || c.op != RAD_C_EQ) return false;  // device facts: this is a host check
            ParamValue v;
            v.i = c.value;
            (*derived)[c.key] = v;
            continue;
        }
        const ParamValue& v = it->second;
        if (v.type == RAD_P_STR) {
            if (c.op != RAD_C_IN || !radiance::core::in_constraint_set(c.set, v.s)) return false;
        } else if (!radiance::core::constraint_holds(c, v.type == RAD_P_F64 ? static_cast<int64_t>(v.f) : v.i)) {
            return false;
        }
    }
    return true;
}

}  // namespace avxcheck
