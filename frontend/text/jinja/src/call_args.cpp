#include "call_args.h"

#include <string>

#include "radiance/jinja/error.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {
[[noreturn]] void type_error(const std::string& msg) { throw Error(Error::Kind::Runtime, msg); }
}  // namespace

std::vector<Value> bind_args(std::string_view function, const Args& args, std::initializer_list<Param> params) {
    const std::string fn(function);
    if (args.positional.size() > params.size())
        type_error(fn + "() takes at most " + std::to_string(params.size()) + " argument(s) (" + std::to_string(args.positional.size()) +
                   " given)");
    std::vector<Value> out;
    std::vector<bool> given(params.size(), false);
    out.reserve(params.size());
    for (const Param& p : params) out.push_back(p.default_value);
    for (size_t i = 0; i < args.positional.size(); ++i) {
        out[i] = args.positional[i];
        given[i] = true;
    }
    for (const auto& [key, value] : args.keyword) {
        size_t i = 0;
        for (const Param& p : params) {
            if (key == p.name) break;
            ++i;
        }
        if (i == params.size()) type_error(fn + "() got an unexpected keyword argument '" + key + "'");
        if (given[i]) type_error(fn + "() got multiple values for argument '" + key + "'");
        out[i] = value;
        given[i] = true;
    }
    size_t i = 0;
    for (const Param& p : params) {
        if (p.required && !given[i]) type_error(fn + "() missing required argument '" + p.name + "'");
        ++i;
    }
    return out;
}

void expect_no_args(std::string_view function, const Args& args) {
    if (!args.positional.empty() || !args.keyword.empty()) type_error(std::string(function) + "() takes no arguments");
}

int64_t int_arg(std::string_view function, const Value& v) {
    if (v.is_int() || v.is_bool()) return v.as_int();
    if (v.is_undefined()) fail_undefined(v);
    type_error(std::string(function) + "(): '" + type_name(v) + "' object cannot be interpreted as an integer");
}

const std::string& string_arg(std::string_view function, const Value& v) {
    if (v.is_string()) return v.as_string();
    if (v.is_undefined()) fail_undefined(v);
    type_error(std::string(function) + "(): argument must be str, not " + type_name(v));
}

}  // namespace radiance::jinja::detail
