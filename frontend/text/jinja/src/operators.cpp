#include "operators.h"

#include <cmath>

#include "attributes.h"
#include "evaluator.h"
#include "py_strings.h"
#include "radiance/jinja/error.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {

const char* symbol(Op op) {
    switch (op) {
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::FloorDiv: return "//";
    case Op::Mod: return "%";
    case Op::Pow: return "** or pow()";
    default: return "?";
    }
}

[[noreturn]] void runtime(const std::string& msg) { throw Error(Error::Kind::Runtime, msg); }

[[noreturn]] void unsupported(Op op, const Value& a, const Value& b) {
    runtime(std::string("unsupported operand type(s) for ") + symbol(op) + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

[[noreturn]] void overflow() { runtime("integer overflow (template ints are 64-bit)"); }

// Runs one of the __builtin_*_overflow checks and returns its result.
template <class F>
int64_t checked(F op, int64_t x, int64_t y) {
    int64_t r = 0;
    if (op(x, y, &r)) overflow();
    return r;
}
bool add_ovf(int64_t x, int64_t y, int64_t* r) { return __builtin_add_overflow(x, y, r); }
bool sub_ovf(int64_t x, int64_t y, int64_t* r) { return __builtin_sub_overflow(x, y, r); }
bool mul_ovf(int64_t x, int64_t y, int64_t* r) { return __builtin_mul_overflow(x, y, r); }

int64_t int_pow(int64_t base, int64_t exp) {
    int64_t result = 1;
    while (exp > 0) {
        if (exp & 1) result = checked(mul_ovf, result, base);
        exp >>= 1;
        if (exp > 0) base = checked(mul_ovf, base, base);
    }
    return result;
}

// Python's float // and %: the remainder takes the divisor's sign.
double float_mod(double a, double b) {
    double mod = std::fmod(a, b);
    if (mod != 0.0) {
        if ((b < 0) != (mod < 0)) mod += b;
    } else {
        mod = std::copysign(0.0, b);
    }
    return mod;
}

double float_floordiv(double a, double b) {
    double mod = std::fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0.0) return std::copysign(0.0, a / b);
    double floored = std::floor(div);
    if (div - floored > 0.5) floored += 1.0;
    return floored;
}

Value repeat(Evaluator& ev, const Value& seq, int64_t times) {
    const bool empty = seq.is_string() ? seq.as_string().empty() : seq.as_list().empty();
    if (times <= 0 || empty) return seq.is_string() ? Value("") : seq.is_tuple() ? Value::tuple({}) : Value::list({});
    if (seq.is_string()) {
        const std::string& s = seq.as_string();
        ev.check_string_size(s.size() * static_cast<size_t>(std::min<int64_t>(times, INT32_MAX)));
        std::string out;
        out.reserve(s.size() * static_cast<size_t>(times));
        for (int64_t i = 0; i < times; ++i) out += s;
        return Value(std::move(out));
    }
    const ValueList& items = seq.as_list();
    ev.check_list_size(items.size() * static_cast<size_t>(std::min<int64_t>(times, INT32_MAX)));
    ValueList out;
    for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
    return seq.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

Value arithmetic(Op op, const Value& a, const Value& b) {
    const bool floats = a.is_float() || b.is_float();
    if (floats) {
        const double x = a.as_float();
        const double y = b.as_float();
        switch (op) {
        case Op::Add: return Value(x + y);
        case Op::Sub: return Value(x - y);
        case Op::Mul: return Value(x * y);
        case Op::Div:
            if (y == 0.0) runtime("float division by zero");
            return Value(x / y);
        case Op::FloorDiv:
            if (y == 0.0) runtime("float floor division by zero");
            return Value(float_floordiv(x, y));
        case Op::Mod:
            if (y == 0.0) runtime("float modulo");
            return Value(float_mod(x, y));
        case Op::Pow: {
            if (x == 0.0 && y < 0) runtime("0.0 cannot be raised to a negative power");
            if (x < 0 && std::floor(y) != y) runtime("negative number cannot be raised to a fractional power (complex result)");
            const double r = std::pow(x, y);
            if (std::isinf(r) && !std::isinf(x) && !std::isinf(y)) runtime("(34, 'Numerical result out of range')");
            return Value(r);
        }
        default: break;
        }
    }
    const int64_t x = a.as_int();
    const int64_t y = b.as_int();
    switch (op) {
    case Op::Add: return Value(checked(add_ovf, x, y));
    case Op::Sub: return Value(checked(sub_ovf, x, y));
    case Op::Mul: return Value(checked(mul_ovf, x, y));
    case Op::Div:
        if (y == 0) runtime("division by zero");
        return Value(static_cast<double>(x) / static_cast<double>(y));
    case Op::FloorDiv: {
        if (y == 0) runtime("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) overflow();
        int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        return Value(q);
    }
    case Op::Mod: {
        if (y == 0) runtime("integer division or modulo by zero");
        if (y == -1) return Value(int64_t{0});
        int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        return Value(m);
    }
    case Op::Pow:
        if (y < 0) {
            if (x == 0) runtime("0.0 cannot be raised to a negative power");
            return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
        }
        return Value(int_pow(x, y));
    default: break;
    }
    unsupported(op, a, b);
}

}  // namespace

Value binary_op(Evaluator& ev, Op op, const Value& a, const Value& b) {
    // str % x formats before Python asks x for __rmod__, so '%s' % undefined is "".
    if (op == Op::Mod && a.is_string()) return Value(py_percent_format(ev, a.as_string(), b));
    if (a.is_undefined()) fail_undefined(a);
    if (b.is_undefined()) fail_undefined(b);
    if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
    switch (op) {
    case Op::Add:
        if (a.is_string() && b.is_string()) {
            ev.check_string_size(a.as_string().size() + b.as_string().size());
            return Value(a.as_string() + b.as_string());
        }
        if (a.is_string()) runtime("can only concatenate str (not \"" + type_name(b) + "\") to str");
        if (a.is_list_or_tuple() && b.is_list_or_tuple() && a.is_tuple() == b.is_tuple()) {
            ev.check_list_size(a.as_list().size() + b.as_list().size());
            ValueList out = a.as_list();
            out.insert(out.end(), b.as_list().begin(), b.as_list().end());
            return a.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
        }
        if (a.is_list_or_tuple()) runtime("can only concatenate " + type_name(a) + " (not \"" + type_name(b) + "\") to " + type_name(a));
        break;
    case Op::Mul:
        if ((a.is_string() || a.is_list_or_tuple()) && (b.is_int() || b.is_bool())) return repeat(ev, a, b.as_int());
        if ((b.is_string() || b.is_list_or_tuple()) && (a.is_int() || a.is_bool())) return repeat(ev, b, a.as_int());
        break;
    default: break;
    }
    unsupported(op, a, b);
}

Value unary_op(Op op, const Value& v) {
    if (op == Op::Not) return Value(!truthy(v));
    if (v.is_undefined()) fail_undefined(v);
    if (!v.is_number()) runtime(std::string("bad operand type for unary ") + (op == Op::Neg ? "-" : "+") + ": '" + type_name(v) + "'");
    if (v.is_float()) return Value(op == Op::Neg ? -v.as_float() : v.as_float());
    if (op == Op::Pos) return Value(v.as_int());
    if (v.as_int() == INT64_MIN) overflow();
    return Value(-v.as_int());
}

bool compare_op(Op op, const Value& a, const Value& b) {
    switch (op) {
    case Op::Eq: return py_equal(a, b);
    case Op::Ne: return !py_equal(a, b);
    case Op::Lt: return py_less(a, b);
    case Op::Le: return py_less(a, b) || py_equal(a, b);
    case Op::Gt: return py_less(b, a);
    case Op::Ge: return py_less(b, a) || py_equal(a, b);
    case Op::In: return contains(b, a);
    case Op::NotIn: return !contains(b, a);
    default: return false;
    }
}

}  // namespace radiance::jinja::detail
