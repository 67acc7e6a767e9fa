#include "globals.h"

#include <cmath>
#include <ctime>

#include "attributes.h"
#include "call_args.h"
#include "evaluator.h"
#include "radiance/jinja/error.h"
#include "runtime_objects.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {

// The sandbox refuses ranges longer than this (MAX_RANGE in jinja2/sandbox.py).
constexpr int64_t kMaxRange = 100000;

Value g_range(Evaluator& ev, const Args& args) {
    if (!args.keyword.empty()) throw Error(Error::Kind::Runtime, "range() takes no keyword arguments");
    const auto& p = args.positional;
    if (p.empty() || p.size() > 3) throw Error(Error::Kind::Runtime, "range expected at most 3 arguments, got " + std::to_string(p.size()));
    int64_t start = 0, stop = 0, step = 1;
    if (p.size() == 1) {
        stop = int_arg("range", p[0]);
    } else {
        start = int_arg("range", p[0]);
        stop = int_arg("range", p[1]);
        if (p.size() == 3) step = int_arg("range", p[2]);
    }
    if (step == 0) throw Error(Error::Kind::Runtime, "range() arg 3 must not be zero");
    // Length as Python computes it, in floating point to avoid overflow on wild bounds.
    const double span =
        step > 0 ? static_cast<double>(stop) - static_cast<double>(start) : static_cast<double>(start) - static_cast<double>(stop);
    const double step_abs = step > 0 ? static_cast<double>(step) : -static_cast<double>(step);
    const double length = span <= 0 ? 0 : std::ceil(span / step_abs);
    if (length > static_cast<double>(kMaxRange))
        throw Error(Error::Kind::Runtime,
                    "Range too big. The sandbox blocks ranges larger than MAX_RANGE (" + std::to_string(kMaxRange) + ").");
    ev.check_list_size(static_cast<size_t>(length));
    ValueList out;
    for (int64_t i = 0; i < static_cast<int64_t>(length); ++i) out.emplace_back(start + i * step);
    return Value::range(std::move(out), start, stop, step);
}

// dict(mapping_or_pairs, **kwargs) and namespace(...) build their items the same way.
DictItems dict_items_from(const char* fn, const Args& args) {
    if (args.positional.size() > 1) throw Error(Error::Kind::Runtime, std::string(fn) + " expected at most 1 positional argument");
    DictItems items;
    auto put = [&](const Value& k, const Value& v) {
        for (auto& kv : items)
            if (py_equal(kv.first, k)) {
                kv.second = v;
                return;
            }
        items.emplace_back(k, v);
    };
    if (!args.positional.empty()) {
        const Value& src = args.positional[0];
        if (src.is_undefined()) fail_undefined(src);  // dict() probes src.keys, which undefined refuses
        if (src.is_dict()) {
            for (const auto& [k, v] : src.as_dict()) put(k, v);
        } else {
            for (const Value& pair : iterate(src)) {
                const ValueList kv = iterate(pair);
                if (kv.size() != 2)
                    throw Error(Error::Kind::Runtime,
                                "dictionary update sequence element has length " + std::to_string(kv.size()) + "; 2 is required");
                put(kv[0], kv[1]);
            }
        }
    }
    for (const auto& [k, v] : args.keyword) put(Value(k), v);
    return items;
}

Value g_dict(Evaluator&, const Args& args) { return Value::dict(dict_items_from("dict", args)); }

Value g_namespace(Evaluator& ev, const Args& args) {
    auto ns = ev.make_namespace();
    for (const auto& [k, v] : dict_items_from("namespace", args)) {
        if (!k.is_string()) throw Error(Error::Kind::Runtime, "namespace attribute names must be strings");
        ns->set_attr(k.as_string(), v);
    }
    return Value::object(ns);
}

// cycler(a, b, c): .next() walks the items round-robin, .current peeks, .reset() restarts.
class Cycler : public Object {
public:
    explicit Cycler(ValueList items) : items_(std::move(items)) {}
    std::string type_name() const override { return "Cycler"; }
    Value get_attr(const std::string& name) const override {
        auto self = pos_;
        const ValueList items = items_;
        if (name == "current") return items_.empty() ? Value::undefined("empty cycler") : items_[*pos_];
        if (name == "next" || name == "__next__")
            return make_function(name, [self, items](Evaluator&, const Args&) {
                if (items.empty()) throw Error(Error::Kind::Runtime, "cycler has no items");
                Value v = items[*self];
                *self = (*self + 1) % items.size();
                return v;
            });
        if (name == "reset")
            return make_function(name, [self](Evaluator&, const Args&) {
                *self = 0;
                return Value::none();
            });
        return Object::get_attr(name);
    }

private:
    ValueList items_;
    std::shared_ptr<size_t> pos_ = std::make_shared<size_t>(0);
};

Value g_cycler(Evaluator&, const Args& args) {
    if (args.positional.empty()) throw Error(Error::Kind::Runtime, "at least one item has to be provided");
    return Value::object(std::make_shared<Cycler>(args.positional));
}

Value g_joiner(Evaluator&, const Args& args) {
    auto a = bind_args("joiner", args, {{"sep", Value(", ")}});
    auto used = std::make_shared<bool>(false);
    const Value sep = a[0];
    return make_function("joiner", [used, sep](Evaluator&, const Args&) {
        if (!*used) {
            *used = true;
            return Value("");
        }
        return sep;
    });
}

Value g_raise_exception(Evaluator&, const Args& args) {
    auto a = bind_args("raise_exception", args, {{"message", Value(), true}});
    throw Error(Error::Kind::Raised, to_str(a[0]));
}

std::string local_strftime(const std::string& format) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[512];
    const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &tm);
    return std::string(buf, n);
}

}  // namespace

void install_globals(Scope& scope, const Options& options) {
    scope.set("range", make_function("range", g_range));
    scope.set("dict", make_function("dict", g_dict));
    scope.set("namespace", make_function("namespace", g_namespace));
    scope.set("cycler", make_function("cycler", g_cycler));
    scope.set("joiner", make_function("joiner", g_joiner));
    scope.set("raise_exception", make_function("raise_exception", g_raise_exception));
    auto clock = options.strftime_now;
    scope.set("strftime_now", make_function("strftime_now", [clock](Evaluator&, const Args& args) {
                  auto a = bind_args("strftime_now", args, {{"format", Value(), true}});
                  const std::string& fmt = string_arg("strftime_now", a[0]);
                  return Value(clock ? clock(fmt) : local_strftime(fmt));
              }));
}

}  // namespace radiance::jinja::detail
