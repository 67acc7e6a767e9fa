// Expression evaluation.
#include <optional>

#include "attributes.h"
#include "builtins.h"
#include "evaluator.h"
#include "operators.h"
#include "radiance/jinja/error.h"
#include "runtime_objects.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {
[[noreturn]] void runtime(const std::string& msg) { throw Error(Error::Kind::Runtime, msg); }

// The optimizer keeps a folded value only when Python can write it back as a literal.
bool has_safe_repr(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::None:
    case Value::Kind::Bool:
    case Value::Kind::Int:
    case Value::Kind::Float:
    case Value::Kind::String: return true;
    case Value::Kind::List:
        if (v.seq_kind() == Value::SeqKind::Range) return true;
        if (!v.is_list_or_tuple()) return false;
        for (const Value& x : v.as_list())
            if (!has_safe_repr(x)) return false;
        return true;
    case Value::Kind::Dict:
        for (const auto& [k, x] : v.as_dict())
            if (!has_safe_repr(k) || !has_safe_repr(x)) return false;
        return true;
    default: return false;
    }
}

}  // namespace

Value Evaluator::eval(const Expr& e, const ScopePtr& scope) {
    tick();
    if (e.constant && !folding_ && e.kind != ExprKind::Literal) {
        if (auto v = try_fold(e, scope); v && has_safe_repr(*v)) return *v;
    }
    try {
        return eval_inner(e, scope);
    } catch (const Error& err) {
        if (err.line() == 0) throw err.with_line(e.line);
        throw;
    }
}

Value Evaluator::eval_inner(const Expr& e, const ScopePtr& scope) {
    switch (e.kind) {
    case ExprKind::Literal: return e.literal;
    case ExprKind::Name: {
        if (folding_) runtime("not a constant");  // a conditional expression's branch
        const Value* v = scope->find(e.name);
        return v ? *v : Value::undefined("'" + e.name + "' is undefined");
    }
    case ExprKind::NamespaceRef: runtime("namespace assignment target used as a value");
    case ExprKind::List:
    case ExprKind::Tuple: {
        ValueList items;
        items.reserve(e.children.size());
        for (const auto& c : e.children) items.push_back(eval(*c, scope));
        return e.kind == ExprKind::Tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
    case ExprKind::Dict: {
        DictItems items;
        for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
            Value k = eval(*e.children[i], scope);
            Value v = eval(*e.children[i + 1], scope);
            require_hashable(k);
            bool replaced = false;  // {'a': 1, 'a': 2}: the later value wins, the first position stays
            for (auto& kv : items)
                if (py_equal(kv.first, k)) {
                    kv.second = std::move(v);
                    replaced = true;
                    break;
                }
            if (!replaced) items.emplace_back(std::move(k), std::move(v));
        }
        return Value::dict(std::move(items));
    }
    case ExprKind::GetAttr: return get_attribute(eval(*e.children[0], scope), e.name);
    case ExprKind::GetItem: return eval_getitem(e, scope);
    case ExprKind::Slice: runtime("slice used outside a subscript");
    case ExprKind::Call: {
        if (folding_) runtime("not a constant");
        const Value callee = eval(*e.children[0], scope);
        return call(callee, eval_args(e.args, scope));
    }
    case ExprKind::Filter:
        if (folding_ && filter_needs_context(e.name)) runtime("not a constant");
        return eval_filter(e, scope, nullptr);
    case ExprKind::Test: {
        const Value operand = eval(*e.children[0], scope);
        return Value(apply_test(e.name, operand, eval_args(e.args, scope)));
    }
    case ExprKind::Unary: return unary_op(e.op, eval(*e.children[0], scope));
    case ExprKind::Binary: {
        const Value a = eval(*e.children[0], scope);
        const Value b = eval(*e.children[1], scope);
        return binary_op(*this, e.op, a, b);
    }
    case ExprKind::And: {  // Python's and/or return an operand, not a bool
        Value a = eval(*e.children[0], scope);
        return truthy(a) ? eval(*e.children[1], scope) : a;
    }
    case ExprKind::Or: {
        Value a = eval(*e.children[0], scope);
        return truthy(a) ? a : eval(*e.children[1], scope);
    }
    case ExprKind::Concat: {
        std::string out;
        for (const auto& c : e.children) {
            append_str(out, eval(*c, scope));
            check_string_size(out.size());
        }
        return Value(std::move(out));
    }
    case ExprKind::Compare: return eval_compare(e, scope);
    case ExprKind::CondExpr: {
        if (truthy(eval(*e.children[1], scope))) return eval(*e.children[0], scope);
        if (e.children[2]) return eval(*e.children[2], scope);
        return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                                " evaluated to false and no else section was defined.");
    }
    }
    return Value();
}

// Jinja's optimizer evaluates constant expressions while compiling, with as_const()
// semantics that differ in one visible way: a failing slice gives undefined (the
// sandbox's getitem) instead of the TypeError it raises at run time. Any error means
// "not foldable", and the expression is evaluated normally at run time.
std::optional<Value> Evaluator::try_fold(const Expr& e, const ScopePtr& scope) {
    struct Folding {
        bool& flag;
        ~Folding() { flag = false; }
    } folding{folding_};
    folding_ = true;
    try {
        return eval_inner(e, scope);
    } catch (const Error&) {
        return std::nullopt;
    }
}

// {{ expr }} of a constant expression prints whatever it folds to, even undefined.
Value Evaluator::eval_output(const Expr& e, const ScopePtr& scope) {
    if (e.constant && !folding_) {
        tick();
        if (auto v = try_fold(e, scope)) return *v;
    }
    return eval(e, scope);
}

Value Evaluator::eval_getitem(const Expr& e, const ScopePtr& scope) {
    const Value obj = eval(*e.children[0], scope);
    const Expr& index = *e.children[1];
    if (index.kind != ExprKind::Slice) return get_item(obj, eval(index, scope));
    auto part = [&](size_t i) { return index.children[i] ? eval(*index.children[i], scope) : Value::none(); };
    const Value start = part(0);
    const Value stop = part(1);
    const Value step = part(2);
    try {
        return get_slice(obj, start, stop, step);
    } catch (const Error& err) {
        // The sandbox's getitem turns TypeError into undefined, but undefined itself raises.
        if (folding_ && !obj.is_undefined()) return Value::undefined(err.message());
        throw;
    }
}

Value Evaluator::eval_compare(const Expr& e, const ScopePtr& scope) {
    // a < b < c means a < b and b < c, with b evaluated once.
    Value left = eval(*e.children[0], scope);
    for (size_t i = 0; i < e.ops.size(); ++i) {
        Value right = eval(*e.children[i + 1], scope);
        if (!compare_op(e.ops[i], left, right)) return Value(false);
        left = std::move(right);
    }
    return Value(true);
}

Value Evaluator::eval_filter(const Expr& e, const ScopePtr& scope, const Value* input) {
    const Expr* operand_expr = e.children[0].get();
    Value operand;
    if (!operand_expr) {
        operand = input ? *input : Value();
    } else if (input && operand_expr->kind == ExprKind::Filter) {
        operand = eval_filter(*operand_expr, scope, input);  // a filter-block chain: a|b|c over the body
    } else {
        operand = eval(*operand_expr, scope);
    }
    return apply_filter(e.name, operand, eval_args(e.args, scope));
}

Args Evaluator::eval_args(const CallArgs& call_args, const ScopePtr& scope) {
    Args args;
    for (const auto& p : call_args.positional) args.positional.push_back(eval(*p, scope));
    if (call_args.star_args)
        for (Value& v : iterate(eval(*call_args.star_args, scope))) args.positional.push_back(std::move(v));
    for (const auto& [k, v] : call_args.keyword) args.keyword.emplace_back(k, eval(*v, scope));
    if (call_args.star_kwargs) {
        const Value kw = eval(*call_args.star_kwargs, scope);
        if (!kw.is_dict()) runtime("argument after ** must be a mapping, not " + type_name(kw));
        for (const auto& [k, v] : kw.as_dict()) {
            if (!k.is_string()) runtime("keywords must be strings");
            args.keyword.emplace_back(k.as_string(), v);
        }
    }
    return args;
}

Value Evaluator::apply_filter(const std::string& name, const Value& input, const Args& args) {
    const FilterFn fn = find_filter(name);
    if (!fn) runtime("No filter named '" + name + "' found.");
    return fn(*this, input, args);
}

bool Evaluator::apply_test(const std::string& name, const Value& input, const Args& args) {
    const TestFn fn = find_test(name);
    if (!fn) runtime("No test named '" + name + "' found.");
    return fn(*this, input, args);
}

}  // namespace radiance::jinja::detail
