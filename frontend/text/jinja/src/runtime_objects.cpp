#include "runtime_objects.h"

#include "call_args.h"
#include "evaluator.h"
#include "radiance/jinja/error.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

Value make_function(std::string name, BuiltinFunction::Fn fn) {
    return Value::object(std::make_shared<BuiltinFunction>(std::move(name), std::move(fn)));
}

// ---- Iterator ----------------------------------------------------------------------
ValueList Iterator::take_rest() {
    ValueList rest(items_.begin() + static_cast<std::ptrdiff_t>(pos_), items_.end());
    pos_ = items_.size();
    return rest;
}

Value make_iterator(ValueList items, std::string type) {
    return Value::object(std::make_shared<Iterator>(std::move(items), std::move(type)));
}

// ---- Namespace ---------------------------------------------------------------------
std::string Namespace::repr() const {
    std::string out = "<Namespace {";
    bool first = true;
    for (const auto& [k, v] : attrs_) {
        if (!first) out += ", ";
        first = false;
        out += repr_string(k) + ": " + to_repr(v);
    }
    return out + "}>";
}

Value Namespace::get_attr(const std::string& name) const {
    for (const auto& [k, v] : attrs_)
        if (k == name) return v;
    return Object::get_attr(name);
}

void Namespace::set_attr(const std::string& name, Value value) {
    if (value.depth() >= kMaxValueDepth) throw Error(Error::Kind::Runtime, "value nested too deeply");
    for (auto& [k, v] : attrs_)
        if (k == name) {
            v = std::move(value);
            return;
        }
    attrs_.emplace_back(name, std::move(value));
}

// ---- Macro -------------------------------------------------------------------------
Value Macro::get_attr(const std::string& name) const {
    if (name == "name") return Value(stmt_->name);
    if (name == "arguments") {
        ValueList names;
        for (const auto& p : stmt_->params) names.emplace_back(p.name);
        return Value::tuple(std::move(names));
    }
    if (name == "catch_kwargs") return Value(stmt_->uses_kwargs);
    if (name == "catch_varargs") return Value(stmt_->uses_varargs);
    if (name == "caller") return Value(stmt_->uses_caller);
    return Object::get_attr(name);
}

Value Macro::call(Evaluator& ev, const Args& args) { return ev.call_macro(*this, args); }

// ---- LoopContext -------------------------------------------------------------------
std::string LoopContext::repr() const { return "<LoopContext " + std::to_string(index_ + 1) + "/" + std::to_string(items_.size()) + ">"; }

Value LoopContext::get_attr(const std::string& name) const {
    const auto i = static_cast<int64_t>(index_);
    const auto n = static_cast<int64_t>(items_.size());
    if (name == "index") return Value(i + 1);
    if (name == "index0") return Value(i);
    if (name == "revindex") return Value(n - i);
    if (name == "revindex0") return Value(n - i - 1);
    if (name == "first") return Value(i == 0);
    if (name == "last") return Value(i == n - 1);
    if (name == "length") return Value(n);
    if (name == "depth") return Value(static_cast<int64_t>(depth_));
    if (name == "depth0") return Value(static_cast<int64_t>(depth_ - 1));
    if (name == "previtem") return i > 0 ? items_[index_ - 1] : Value::undefined("there is no previous item");
    if (name == "nextitem") return i + 1 < n ? items_[index_ + 1] : Value::undefined("there is no next item");
    if (name == "cycle") {
        const size_t index = index_;
        return make_function("cycle", [index](Evaluator&, const Args& args) {
            if (args.positional.empty()) throw Error(Error::Kind::Runtime, "no items for cycling given");
            return args.positional[index % args.positional.size()];
        });
    }
    if (name == "changed") {
        auto last = last_changed_;
        return make_function("changed", [last](Evaluator&, const Args& args) {
            Value now = Value::tuple(args.positional);
            if (!last->is_undefined() && py_equal(*last, now)) return Value(false);
            *last = std::move(now);
            return Value(true);
        });
    }
    return Object::get_attr(name);
}

Value LoopContext::call(Evaluator& ev, const Args& args) {
    if (!stmt_->recursive) return Object::call(ev, args);
    auto a = bind_args("loop", args, {{"iterable", Value(), true}});
    auto scope = scope_.lock();
    if (!scope) throw Error(Error::Kind::Runtime, "loop() called after its loop ended");
    return Value(ev.run_recursive_loop(*stmt_, a[0], scope, depth_ + 1));
}

}  // namespace radiance::jinja::detail
