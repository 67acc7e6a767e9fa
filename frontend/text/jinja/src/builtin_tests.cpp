// Jinja's builtin tests (`x is defined`, `x is string`, ...) with Python's notion of
// each type: bool counts as a number, dicts are sequences, undefined is iterable.
#include <unordered_map>

#include "attributes.h"
#include "builtins.h"
#include "call_args.h"
#include "evaluator.h"
#include "operators.h"
#include "radiance/jinja/error.h"
#include "runtime_objects.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {

// Tests are Python functions of fixed arity: extra arguments are a TypeError.
bool no_args(const char* name, const Args& args) {
    expect_no_args(name, args);
    return true;
}

Value one_arg(const char* name, const Args& args) { return bind_args(name, args, {{"other", Value(), true}})[0]; }

bool t_defined(Evaluator&, const Value& v, const Args& a) { return no_args("defined", a), !v.is_undefined(); }
bool t_undefined(Evaluator&, const Value& v, const Args& a) { return no_args("undefined", a), v.is_undefined(); }
bool t_none(Evaluator&, const Value& v, const Args& a) { return no_args("none", a), v.is_none(); }
bool t_boolean(Evaluator&, const Value& v, const Args& a) { return no_args("boolean", a), v.is_bool(); }
bool t_true(Evaluator&, const Value& v, const Args& a) { return no_args("true", a), v.is_bool() && v.as_bool(); }
bool t_false(Evaluator&, const Value& v, const Args& a) { return no_args("false", a), v.is_bool() && !v.as_bool(); }
bool t_integer(Evaluator&, const Value& v, const Args& a) { return no_args("integer", a), v.is_int(); }
bool t_float(Evaluator&, const Value& v, const Args& a) { return no_args("float", a), v.is_float(); }
bool t_number(Evaluator&, const Value& v, const Args& a) { return no_args("number", a), v.is_number(); }
bool t_string(Evaluator&, const Value& v, const Args& a) { return no_args("string", a), v.is_string(); }
bool t_mapping(Evaluator&, const Value& v, const Args& a) { return no_args("mapping", a), v.is_dict(); }

bool t_iterable(Evaluator&, const Value& v, const Args& a) {
    no_args("iterable", a);
    return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict() || (v.is_object() && dynamic_cast<Iterator*>(v.as_object()));
}
// len() and __getitem__: str, list, tuple, range, dict, and Undefined (which defines
// both); dict views have no __getitem__.
bool t_sequence(Evaluator&, const Value& v, const Args& a) {
    no_args("sequence", a);
    return v.is_undefined() || v.is_string() || v.is_list_or_tuple() || v.is_dict() ||
           (v.is_list() && v.seq_kind() == Value::SeqKind::Range);
}
bool t_callable(Evaluator&, const Value& v, const Args& a) {
    no_args("callable", a);
    return v.is_undefined() || (v.is_object() && v.as_object()->is_callable());
}

bool t_odd(Evaluator& ev, const Value& v, const Args& a) {
    no_args("odd", a);
    return py_equal(binary_op(ev, Op::Mod, v, Value(2)), Value(1));
}
bool t_even(Evaluator& ev, const Value& v, const Args& a) {
    no_args("even", a);
    return py_equal(binary_op(ev, Op::Mod, v, Value(2)), Value(0));
}
bool t_divisibleby(Evaluator& ev, const Value& v, const Args& a) {
    return py_equal(binary_op(ev, Op::Mod, v, bind_args("divisibleby", a, {{"num", Value(), true}})[0]), Value(0));
}

bool case_test(const Value& v, bool lower) {
    const std::string s = to_str(v);
    bool cased = false;
    for (size_t pos = 0; pos < s.size();) {
        const char32_t c = next_code_point(s, pos);
        if (!is_cased(c)) continue;
        cased = true;
        if (lower ? to_lower_cp(c) != c : to_upper_cp(c) != c) return false;
    }
    return cased;
}
bool t_lower(Evaluator&, const Value& v, const Args& a) { return no_args("lower", a), case_test(v, true); }
bool t_upper(Evaluator&, const Value& v, const Args& a) { return no_args("upper", a), case_test(v, false); }

// Python's `is`: singletons and small ints compare by value, everything else by object.
bool t_sameas(Evaluator&, const Value& v, const Args& a) {
    const Value other = one_arg("sameas", a);
    if (v.kind() != other.kind()) return false;
    switch (v.kind()) {
    case Value::Kind::None:
    case Value::Kind::Undefined: return v.is_none();
    case Value::Kind::Bool: return v.as_bool() == other.as_bool();
    case Value::Kind::Int: return v.as_int() == other.as_int() && v.as_int() >= -5 && v.as_int() <= 256;
    case Value::Kind::Float: return false;
    default: return v.identity() == other.identity();
    }
}

bool t_escaped(Evaluator&, const Value&, const Args& a) { return no_args("escaped", a), false; }  // no Markup here
bool t_in(Evaluator&, const Value& v, const Args& a) { return contains(one_arg("in", a), v); }
bool t_filter(Evaluator&, const Value& v, const Args& a) { return no_args("filter", a), v.is_string() && find_filter(v.as_string()); }
bool t_test(Evaluator&, const Value& v, const Args& a) { return no_args("test", a), v.is_string() && find_test(v.as_string()); }

bool t_eq(Evaluator&, const Value& v, const Args& a) { return compare_op(Op::Eq, v, one_arg("eq", a)); }
bool t_ne(Evaluator&, const Value& v, const Args& a) { return compare_op(Op::Ne, v, one_arg("ne", a)); }
bool t_lt(Evaluator&, const Value& v, const Args& a) { return compare_op(Op::Lt, v, one_arg("lt", a)); }
bool t_le(Evaluator&, const Value& v, const Args& a) { return compare_op(Op::Le, v, one_arg("le", a)); }
bool t_gt(Evaluator&, const Value& v, const Args& a) { return compare_op(Op::Gt, v, one_arg("gt", a)); }
bool t_ge(Evaluator&, const Value& v, const Args& a) { return compare_op(Op::Ge, v, one_arg("ge", a)); }

const std::unordered_map<std::string_view, TestFn>& tests() {
    static const std::unordered_map<std::string_view, TestFn> table = {
        {"defined", t_defined},
        {"undefined", t_undefined},
        {"none", t_none},
        {"boolean", t_boolean},
        {"true", t_true},
        {"false", t_false},
        {"integer", t_integer},
        {"float", t_float},
        {"number", t_number},
        {"string", t_string},
        {"mapping", t_mapping},
        {"iterable", t_iterable},
        {"sequence", t_sequence},
        {"callable", t_callable},
        {"odd", t_odd},
        {"even", t_even},
        {"divisibleby", t_divisibleby},
        {"lower", t_lower},
        {"upper", t_upper},
        {"sameas", t_sameas},
        {"escaped", t_escaped},
        {"in", t_in},
        {"filter", t_filter},
        {"test", t_test},
        {"==", t_eq},
        {"eq", t_eq},
        {"equalto", t_eq},
        {"!=", t_ne},
        {"ne", t_ne},
        {"<", t_lt},
        {"lt", t_lt},
        {"lessthan", t_lt},
        {"<=", t_le},
        {"le", t_le},
        {">", t_gt},
        {"gt", t_gt},
        {"greaterthan", t_gt},
        {">=", t_ge},
        {"ge", t_ge},
    };
    return table;
}

}  // namespace

TestFn find_test(std::string_view name) {
    const auto& table = tests();
    const auto it = table.find(name);
    return it == table.end() ? nullptr : it->second;
}

}  // namespace radiance::jinja::detail
