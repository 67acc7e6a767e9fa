#include "radiance/jinja/value.h"

#include <algorithm>

#include "radiance/jinja/error.h"
#include "value_ops.h"

namespace radiance::jinja {

namespace {
struct ListData {
    ValueList items;
    int depth;
    int64_t range_start = 0, range_stop = 0, range_step = 1;  // for SeqKind::Range
};
struct DictData {
    DictItems items;
    int depth;
};

const std::string& empty_string() {
    static const std::string empty;
    return empty;
}

int child_depth(const Value& v) { return v.depth(); }

void check_depth(int depth) {
    if (depth > kMaxValueDepth)
        throw Error(Error::Kind::Runtime, "value nested more than " + std::to_string(kMaxValueDepth) + " levels deep");
}
}  // namespace

std::string Object::repr() const { return "<" + type_name() + " object>"; }

Value Object::get_attr(const std::string& name) const {
    return Value::undefined("'" + type_name() + " object' has no attribute '" + name + "'");
}

Value Object::call(detail::Evaluator&, const Args&) { throw Error(Error::Kind::Runtime, "'" + type_name() + "' object is not callable"); }

Value::Value(std::string s) : kind_(Kind::String), ptr_(std::make_shared<std::string>(std::move(s))) {}

Value Value::undefined(std::string hint) {
    Value v;
    if (!hint.empty()) v.ptr_ = std::make_shared<std::string>(std::move(hint));
    return v;
}

Value Value::none() {
    Value v;
    v.kind_ = Kind::None;
    return v;
}

Value Value::list(ValueList items) {
    int depth = 0;
    for (const auto& item : items) depth = std::max(depth, child_depth(item));
    check_depth(depth + 1);
    Value v;
    v.kind_ = Kind::List;
    v.ptr_ = std::make_shared<ListData>(ListData{std::move(items), depth + 1});
    return v;
}

Value Value::tuple(ValueList items) { return sequence(std::move(items), SeqKind::Tuple); }

Value Value::sequence(ValueList items, SeqKind kind) {
    Value v = list(std::move(items));
    v.seq_ = kind;
    return v;
}

Value Value::range(ValueList items, int64_t start, int64_t stop, int64_t step) {
    Value v = sequence(std::move(items), SeqKind::Range);
    auto* data = static_cast<ListData*>(v.ptr_.get());
    data->range_start = start;
    data->range_stop = stop;
    data->range_step = step;
    return v;
}

void Value::range_params(int64_t& start, int64_t& stop, int64_t& step) const {
    const auto* data = static_cast<const ListData*>(ptr_.get());
    start = data->range_start;
    stop = data->range_stop;
    step = data->range_step;
}

Value Value::dict(DictItems items) {
    int depth = 0;
    for (const auto& [k, val] : items) depth = std::max({depth, child_depth(k), child_depth(val)});
    check_depth(depth + 1);
    Value v;
    v.kind_ = Kind::Dict;
    v.ptr_ = std::make_shared<DictData>(DictData{std::move(items), depth + 1});
    return v;
}

Value Value::object(std::shared_ptr<Object> obj) {
    Value v;
    v.kind_ = Kind::Object;
    v.ptr_ = std::move(obj);
    return v;
}

double Value::as_float() const {
    switch (kind_) {
    case Kind::Float: return scalar_.f;
    case Kind::Int: return static_cast<double>(scalar_.i);
    case Kind::Bool: return scalar_.b ? 1.0 : 0.0;
    default: return 0.0;
    }
}

const std::string& Value::as_string() const {
    return kind_ == Kind::String ? *static_cast<const std::string*>(ptr_.get()) : empty_string();
}

const ValueList& Value::as_list() const {
    static const ValueList empty;
    return kind_ == Kind::List ? static_cast<const ListData*>(ptr_.get())->items : empty;
}

const DictItems& Value::as_dict() const {
    static const DictItems empty;
    return kind_ == Kind::Dict ? static_cast<const DictData*>(ptr_.get())->items : empty;
}

Object* Value::as_object() const { return kind_ == Kind::Object ? static_cast<Object*>(ptr_.get()) : nullptr; }

std::shared_ptr<Object> Value::object_ptr() const {
    // The payload was stored from a shared_ptr<Object>; aliasing shares its control block.
    if (kind_ != Kind::Object) return nullptr;
    return std::shared_ptr<Object>(ptr_, static_cast<Object*>(ptr_.get()));
}

const std::string& Value::undefined_hint() const {
    return (kind_ == Kind::Undefined && ptr_) ? *static_cast<const std::string*>(ptr_.get()) : empty_string();
}

int Value::depth() const {
    if (kind_ == Kind::List) return static_cast<const ListData*>(ptr_.get())->depth;
    if (kind_ == Kind::Dict) return static_cast<const DictData*>(ptr_.get())->depth;
    return 0;
}

const Value* Value::find(const Value& key) const {
    for (const auto& [k, v] : as_dict())
        if (detail::py_equal(k, key)) return &v;
    return nullptr;
}

const Value* Value::find(const std::string& key) const {
    for (const auto& [k, v] : as_dict())
        if (k.is_string() && k.as_string() == key) return &v;
    return nullptr;
}

}  // namespace radiance::jinja
