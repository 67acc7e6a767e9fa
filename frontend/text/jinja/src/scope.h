// Variable scopes. Jinja gives each for-loop iteration, macro call, call/filter/set
// block and with-block a fresh scope whose writes never reach the enclosing one (hence
// namespace() for state that must survive a loop), while if-blocks share their scope.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "radiance/jinja/value.h"

namespace radiance::jinja::detail {

class Scope {
public:
    explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent_(std::move(parent)) {}

    // Looks the name up here, then in the enclosing scopes; null when unbound.
    const Value* find(const std::string& name) const {
        for (const Scope* s = this; s; s = s->parent_.get())
            for (const auto& [n, v] : s->vars_)
                if (n == name) return &v;
        return nullptr;
    }

    void set(const std::string& name, Value value) {
        for (auto& [n, v] : vars_)
            if (n == name) {
                v = std::move(value);
                return;
            }
        vars_.emplace_back(name, std::move(value));
    }

private:
    std::shared_ptr<Scope> parent_;
    std::vector<std::pair<std::string, Value>> vars_;  // a handful per scope: a vector beats a map
};

using ScopePtr = std::shared_ptr<Scope>;

}  // namespace radiance::jinja::detail
