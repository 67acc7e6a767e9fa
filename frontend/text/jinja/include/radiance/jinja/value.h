// The values a template computes with, modelled on the Python objects Jinja sees:
// undefined, None, bool, int, float, str, list/tuple, dict (insertion ordered) and
// reference objects (namespace(), loop, macros, bound methods, builtin functions).
// Strings, lists and dicts are immutable and shared, so copying a Value is cheap;
// this matches transformers' ImmutableSandboxedEnvironment, where templates cannot
// mutate lists or dicts either.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace radiance::jinja {

class Value;
using ValueList = std::vector<Value>;
using DictItems = std::vector<std::pair<Value, Value>>;

namespace detail {
class Evaluator;
}

// Arguments of a call, a filter or a test, after evaluation.
struct Args {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;
};

// A value with reference semantics and Python-like attributes.
class Object {
public:
    virtual ~Object() = default;
    // Python's type name, used in error messages ("Namespace", "LoopContext", "function").
    virtual std::string type_name() const = 0;
    virtual std::string repr() const;
    // Undefined when there is no such attribute.
    virtual Value get_attr(const std::string& name) const;
    virtual bool is_callable() const { return false; }
    virtual Value call(detail::Evaluator& ev, const Args& args);
};

class Value {
public:
    enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Object };
    // The Python type behind a Kind::List value. Ranges and dict views (d.keys(), d.items())
    // iterate like lists but print, compare and subscript as Python's own types do.
    enum class SeqKind : uint8_t { List, Tuple, Range, DictKeys, DictValues, DictItems };

    Value() = default;  // undefined
    Value(bool b) : kind_(Kind::Bool) { scalar_.b = b; }
    Value(int i) : Value(static_cast<int64_t>(i)) {}
    Value(int64_t i) : kind_(Kind::Int) { scalar_.i = i; }
    Value(double f) : kind_(Kind::Float) { scalar_.f = f; }
    Value(std::string s);
    Value(const char* s) : Value(std::string(s)) {}

    // `hint` is the message reported when the undefined value is used in a way that fails
    // (printing it or testing it never fails; calling it or reading its attributes does).
    static Value undefined(std::string hint = {});
    static Value none();
    static Value list(ValueList items);
    static Value tuple(ValueList items);
    static Value sequence(ValueList items, SeqKind kind);
    // range(start, stop, step) with its items already computed.
    static Value range(ValueList items, int64_t start, int64_t stop, int64_t step);
    static Value dict(DictItems items);
    static Value object(std::shared_ptr<Object> obj);

    Kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == Kind::Undefined; }
    bool is_none() const { return kind_ == Kind::None; }
    bool is_bool() const { return kind_ == Kind::Bool; }
    bool is_int() const { return kind_ == Kind::Int; }
    bool is_float() const { return kind_ == Kind::Float; }
    // Python's numbers: bool is an int subclass.
    bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
    bool is_string() const { return kind_ == Kind::String; }
    bool is_list() const { return kind_ == Kind::List; }  // any SeqKind
    bool is_tuple() const { return kind_ == Kind::List && seq_ == SeqKind::Tuple; }
    // A real list or tuple: supports +, *, slicing and json.dumps, unlike ranges and views.
    bool is_list_or_tuple() const { return kind_ == Kind::List && (seq_ == SeqKind::List || seq_ == SeqKind::Tuple); }
    SeqKind seq_kind() const { return seq_; }
    // start, stop, step of a range value.
    void range_params(int64_t& start, int64_t& stop, int64_t& step) const;
    bool is_dict() const { return kind_ == Kind::Dict; }
    bool is_object() const { return kind_ == Kind::Object; }

    bool as_bool() const { return scalar_.b; }
    // Int value; bools count as 0/1 like Python.
    int64_t as_int() const { return kind_ == Kind::Bool ? (scalar_.b ? 1 : 0) : scalar_.i; }
    // Any number as a double.
    double as_float() const;
    const std::string& as_string() const;
    const ValueList& as_list() const;
    const DictItems& as_dict() const;
    Object* as_object() const;
    std::shared_ptr<Object> object_ptr() const;
    const std::string& undefined_hint() const;

    // Identity of the shared payload (Python's `is` for strings, lists, dicts, objects).
    const void* identity() const { return ptr_.get(); }

    // Nesting depth of containers (0 for scalars); bounded so str()/tojson cannot overflow the stack.
    int depth() const;

    // Dict lookup with Python key equality (1 == 1.0 == True); null when missing.
    const Value* find(const Value& key) const;
    const Value* find(const std::string& key) const;
    const Value* find(const char* key) const { return find(std::string(key)); }

private:
    Kind kind_ = Kind::Undefined;
    SeqKind seq_ = SeqKind::List;
    union {
        bool b;
        int64_t i;
        double f;
    } scalar_{};
    // String, undefined hint, list, dict or object payload, chosen by kind_.
    std::shared_ptr<void> ptr_;
};

// Nesting beyond this is refused with an error: repr and json.dumps recurse per level.
constexpr int kMaxValueDepth = 200;

}  // namespace radiance::jinja
