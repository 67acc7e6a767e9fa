// Methods of dict and list values. Read-only ones work; the ones that would mutate
// (append, update, pop, ...) are unsafe in transformers' immutable sandbox.
#include <algorithm>
#include <array>
#include <string_view>

#include "attributes.h"
#include "call_args.h"
#include "radiance/jinja/error.h"
#include "runtime_objects.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {
template <size_t N>
bool is_one_of(const std::string& name, const std::array<std::string_view, N>& names) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

constexpr std::array<std::string_view, 5> kUnsafeDictMethods = {"clear", "pop", "popitem", "setdefault", "update"};
constexpr std::array<std::string_view, 8> kUnsafeListMethods = {"append", "clear", "pop", "reverse", "insert", "sort", "extend", "remove"};
}  // namespace

Value dict_method(const Value& self, const std::string& name) {
    if (is_one_of(name, kUnsafeDictMethods)) return unsafe_attribute(self, name);
    if (name == "keys" || name == "values" || name == "items") {
        return make_function(name, [self, name](Evaluator&, const Args& args) {
            expect_no_args(name, args);
            ValueList out;
            for (const auto& [k, v] : self.as_dict()) {
                if (name == "keys")
                    out.push_back(k);
                else if (name == "values")
                    out.push_back(v);
                else
                    out.push_back(Value::tuple({k, v}));
            }
            const auto kind = name == "keys"     ? Value::SeqKind::DictKeys
                              : name == "values" ? Value::SeqKind::DictValues
                                                 : Value::SeqKind::DictItems;
            return Value::sequence(std::move(out), kind);
        });
    }
    if (name == "get") {
        return make_function(name, [self](Evaluator&, const Args& args) {
            auto a = bind_args("get", args, {{"key", Value(), true}, {"default", Value::none()}});
            const Value* v = self.find(a[0]);
            return v ? *v : a[1];
        });
    }
    if (name == "copy") {
        return make_function(name, [self](Evaluator&, const Args& args) {
            expect_no_args("copy", args);
            return self;
        });
    }
    return Value();
}

Value list_method(const Value& self, const std::string& name) {
    if (!self.is_list_or_tuple() && self.seq_kind() != Value::SeqKind::Range) return Value();  // dict views
    if (self.seq_kind() == Value::SeqKind::List && is_one_of(name, kUnsafeListMethods)) return unsafe_attribute(self, name);
    if (name == "count") {
        return make_function(name, [self](Evaluator&, const Args& args) {
            auto a = bind_args("count", args, {{"value", Value(), true}});
            const auto& items = self.as_list();
            return Value(
                static_cast<int64_t>(std::count_if(items.begin(), items.end(), [&](const Value& x) { return py_equal(x, a[0]); })));
        });
    }
    if (name == "index") {
        return make_function(name, [self](Evaluator&, const Args& args) {
            auto a = bind_args("index", args, {{"value", Value(), true}});
            const auto& items = self.as_list();
            for (size_t i = 0; i < items.size(); ++i)
                if (py_equal(items[i], a[0])) return Value(static_cast<int64_t>(i));
            throw Error(Error::Kind::Runtime, to_repr(a[0]) + " is not in list");
        });
    }
    if (name == "copy" && self.seq_kind() == Value::SeqKind::List) {
        return make_function(name, [self](Evaluator&, const Args& args) {
            expect_no_args("copy", args);
            return self;
        });
    }
    return Value();
}

}  // namespace radiance::jinja::detail
