// Statement execution: output, control flow, assignment and Jinja's scoping rules.
#include "evaluator.h"

#include "attributes.h"
#include "globals.h"
#include "radiance/jinja/error.h"
#include "runtime_objects.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {
[[noreturn]] void runtime(const std::string& msg) { throw Error(Error::Kind::Runtime, msg); }

// Adds the statement's line to errors raised without one, and turns C++ library
// exceptions (bad_alloc, out_of_range from number parsing) into template errors.
template <class F>
auto with_line(int line, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const Error& e) {
        if (e.line() == 0) throw e.with_line(line);
        throw;
    } catch (const std::exception& e) {
        throw Error(Error::Kind::Runtime, e.what(), line);
    }
}
}  // namespace

Evaluator::Evaluator(const ParsedTemplate& tmpl, const Options& options) : tmpl_(tmpl), options_(options) {}

Evaluator::~Evaluator() {
    // Namespaces can reference each other (ns.a = other_ns, ns.me = ns); clearing them in
    // creation order frees every chain without cycles and without deep recursion.
    for (auto& weak : namespaces_)
        if (auto ns = weak.lock()) ns->clear();
}

std::string Evaluator::render(const Value& context) {
    auto globals = std::make_shared<Scope>();
    install_globals(*globals, options_);
    auto vars = std::make_shared<Scope>(globals);
    for (const auto& [k, v] : context.as_dict())
        if (k.is_string()) vars->set(k.as_string(), v);
    auto top = std::make_shared<Scope>(vars);
    std::string out;
    exec_body(tmpl_.body, top, out);
    return out;
}

std::shared_ptr<Namespace> Evaluator::make_namespace() {
    auto ns = std::make_shared<Namespace>();
    namespaces_.push_back(ns);
    return ns;
}

void Evaluator::check_string_size(size_t bytes) const {
    if (bytes > options_.max_output_bytes)
        runtime("string of " + std::to_string(bytes) + " bytes exceeds the limit of " + std::to_string(options_.max_output_bytes));
}

void Evaluator::check_list_size(size_t items) const {
    if (items > options_.max_list_items)
        runtime("list of " + std::to_string(items) + " items exceeds the limit of " + std::to_string(options_.max_list_items));
}

void Evaluator::fail_steps() const { runtime("template exceeded " + std::to_string(options_.max_steps) + " evaluation steps"); }

void Evaluator::append_output(std::string& out, const Value& v) {
    append_str(out, v);
    check_string_size(out.size());
}

Evaluator::Flow Evaluator::exec_body(const Body& body, const ScopePtr& scope, std::string& out) {
    for (const auto& stmt : body) {
        const Flow f = exec(*stmt, scope, out);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

std::string Evaluator::capture(const Body& body, const ScopePtr& scope) {
    std::string out;
    exec_body(body, std::make_shared<Scope>(scope), out);
    return out;
}

Evaluator::Flow Evaluator::exec(const Stmt& stmt, const ScopePtr& scope, std::string& out) {
    tick();
    return with_line(stmt.line, [&]() -> Flow {
        switch (stmt.kind) {
        case StmtKind::Text:
            out += static_cast<const TextStmt&>(stmt).text;
            check_string_size(out.size());
            return Flow::Normal;
        case StmtKind::Output:
            for (const auto& e : static_cast<const OutputStmt&>(stmt).exprs) append_output(out, eval_output(*e, scope));
            return Flow::Normal;
        case StmtKind::If: {
            const auto& s = static_cast<const IfStmt&>(stmt);
            for (size_t i = 0; i < s.conditions.size(); ++i)
                if (truthy(eval(*s.conditions[i], scope))) return exec_body(s.bodies[i], scope, out);
            return exec_body(s.else_body, scope, out);
        }
        case StmtKind::For: return exec_for(static_cast<const ForStmt&>(stmt), scope, out);
        case StmtKind::Set: {
            const auto& s = static_cast<const SetStmt&>(stmt);
            assign(s.target, eval(*s.value, scope), scope);
            return Flow::Normal;
        }
        case StmtKind::SetBlock: {
            const auto& s = static_cast<const SetBlockStmt&>(stmt);
            Value body(capture(s.body, scope));
            assign(s.target, s.filter ? eval_filter(*s.filter, scope, &body) : body, scope);
            return Flow::Normal;
        }
        case StmtKind::Macro: {
            const auto& s = static_cast<const MacroStmt&>(stmt);
            scope->set(s.name, Value::object(std::make_shared<Macro>(&s, scope)));
            return Flow::Normal;
        }
        case StmtKind::CallBlock: exec_call_block(static_cast<const CallBlockStmt&>(stmt), scope, out); return Flow::Normal;
        case StmtKind::FilterBlock: {
            const auto& s = static_cast<const FilterBlockStmt&>(stmt);
            Value body(capture(s.body, scope));
            append_output(out, eval_filter(*s.filter, scope, &body));
            return Flow::Normal;
        }
        case StmtKind::With: {
            const auto& s = static_cast<const WithStmt&>(stmt);
            auto inner = std::make_shared<Scope>(scope);
            for (size_t i = 0; i < s.targets.size(); ++i) assign(s.targets[i], eval(*s.values[i], scope), inner);
            return exec_body(s.body, inner, out);
        }
        case StmtKind::Break: return Flow::Break;
        case StmtKind::Continue: return Flow::Continue;
        case StmtKind::Do: eval(*static_cast<const DoStmt&>(stmt).expr, scope); return Flow::Normal;
        case StmtKind::Scope:
            out += capture(static_cast<const ScopeStmt&>(stmt).body, scope);
            check_string_size(out.size());
            return Flow::Normal;
        }
        return Flow::Normal;
    });
}

Evaluator::Flow Evaluator::exec_for(const ForStmt& stmt, const ScopePtr& scope, std::string& out) {
    const Value iterable = eval(*stmt.iterable, scope);
    return run_loop(stmt, iterable, scope, 1, out);
}

Evaluator::Flow Evaluator::run_loop(const ForStmt& stmt, const Value& iterable, const ScopePtr& scope, int depth, std::string& out) {
    ValueList items = iterate(iterable);
    if (stmt.filter) {  // "for x in y if cond": filtered before the loop, so loop.* counts kept items
        ValueList kept;
        for (const Value& item : items) {
            tick();
            auto s = std::make_shared<Scope>(scope);
            assign(stmt.target, item, s);
            if (truthy(eval(*stmt.filter, s))) kept.push_back(item);
        }
        items = std::move(kept);
    }
    auto loop = std::make_shared<LoopContext>(std::move(items), depth, &stmt, scope);
    const Value loop_value = Value::object(loop);
    // Jinja runs the else block unless some iteration reached the end of the body: an
    // empty loop, or one whose every iteration ended in break or continue.
    bool completed_iteration = false;
    for (size_t i = 0; i < loop->items().size(); ++i) {
        tick();
        loop->set_index(i);
        // Each iteration gets a fresh scope: assignments in one iteration are not seen by
        // the next, nor after the loop.
        auto s = std::make_shared<Scope>(scope);
        assign(stmt.target, loop->items()[i], s);
        s->set("loop", loop_value);
        const Flow f = exec_body(stmt.body, s, out);
        if (f == Flow::Normal) completed_iteration = true;
        if (f == Flow::Break) break;
    }
    if (completed_iteration || stmt.else_body.empty()) return Flow::Normal;
    // The else block runs in its own scope; a break or continue there belongs to an
    // enclosing loop.
    return exec_body(stmt.else_body, std::make_shared<Scope>(scope), out);
}

std::string Evaluator::run_recursive_loop(const ForStmt& stmt, const Value& iterable, const ScopePtr& scope, int depth) {
    if (recursion_ >= options_.max_recursion) runtime("maximum recursion depth exceeded in recursive loop");
    ++recursion_;
    struct Unwind {
        int& r;
        ~Unwind() { --r; }
    } unwind{recursion_};
    std::string out;
    run_loop(stmt, iterable, scope, depth, out);
    return out;
}

void Evaluator::exec_call_block(const CallBlockStmt& stmt, const ScopePtr& scope, std::string& out) {
    const Expr& call = *stmt.call;
    const Value callee = eval(*call.children[0], scope);
    Args args = eval_args(call.args, scope);
    args.keyword.emplace_back("caller", Value::object(std::make_shared<Macro>(stmt.caller.get(), scope)));
    append_output(out, this->call(callee, args));
}

void Evaluator::assign(const Target& target, const Value& value, const ScopePtr& scope) {
    switch (target.kind) {
    case Target::Kind::Name: scope->set(target.name, value); return;
    case Target::Kind::NamespaceAttr: {
        const Value* ns_value = scope->find(target.name);
        auto* ns = ns_value ? dynamic_cast<Namespace*>(ns_value->as_object()) : nullptr;
        if (!ns) runtime("cannot assign attribute on non-namespace object");
        ns->set_attr(target.attr, value);
        return;
    }
    case Target::Kind::Tuple: {
        const ValueList items = iterate(value);
        const size_t n = target.items.size();
        if (items.size() > n) runtime("too many values to unpack (expected " + std::to_string(n) + ")");
        if (items.size() < n)
            runtime("not enough values to unpack (expected " + std::to_string(n) + ", got " + std::to_string(items.size()) + ")");
        for (size_t i = 0; i < n; ++i) assign(target.items[i], items[i], scope);
        return;
    }
    }
}

Value Evaluator::call(const Value& callee, const Args& args) {
    if (callee.is_undefined()) fail_undefined(callee);
    Object* obj = callee.as_object();
    if (!obj || !obj->is_callable()) runtime("'" + type_name(callee) + "' object is not callable");
    auto keep_alive = callee.object_ptr();
    return obj->call(*this, args);
}

Value Evaluator::call_macro(Macro& macro, const Args& args) {
    const MacroStmt& m = macro.stmt();
    auto closure = macro.closure();
    if (!closure) runtime("macro '" + m.name + "' called after the scope it was defined in ended");
    if (recursion_ >= options_.max_recursion) runtime("maximum recursion depth exceeded in macro '" + m.name + "'");
    ++recursion_;
    struct Unwind {
        int& r;
        ~Unwind() { --r; }
    } unwind{recursion_};

    auto scope = std::make_shared<Scope>(closure);
    const size_t n = m.params.size();
    std::vector<bool> bound(n, false);
    ValueList extra_positional;
    for (size_t i = 0; i < args.positional.size(); ++i) {
        if (i < n) {
            scope->set(m.params[i].name, args.positional[i]);
            bound[i] = true;
        } else {
            extra_positional.push_back(args.positional[i]);
        }
    }
    if (!extra_positional.empty() && !m.uses_varargs)
        runtime("macro '" + m.name + "' takes not more than " + std::to_string(n) + " argument(s)");
    DictItems extra_keyword;
    Value caller = Value::undefined("No caller defined");
    for (const auto& [key, value] : args.keyword) {
        size_t i = 0;
        while (i < n && m.params[i].name != key) ++i;
        if (i < n) {
            if (bound[i]) runtime("macro '" + m.name + "' got multiple values for argument '" + key + "'");
            scope->set(key, value);
            bound[i] = true;
        } else if (key == "caller" && m.uses_caller) {
            caller = value;
        } else if (m.uses_kwargs) {
            extra_keyword.emplace_back(Value(key), value);
        } else {
            runtime("macro '" + m.name + "' takes no keyword argument '" + key + "'");
        }
    }
    // Defaults are evaluated per call, in order, so later ones can use earlier parameters.
    for (size_t i = 0; i < n; ++i) {
        if (bound[i]) continue;
        const MacroParam& p = m.params[i];
        scope->set(p.name,
                   p.default_value ? eval(*p.default_value, scope) : Value::undefined("parameter '" + p.name + "' was not provided"));
    }
    if (m.uses_varargs) scope->set("varargs", Value::tuple(std::move(extra_positional)));
    if (m.uses_kwargs) scope->set("kwargs", Value::dict(std::move(extra_keyword)));
    if (m.uses_caller) scope->set("caller", caller);
    std::string out;
    exec_body(m.body, scope, out);
    return Value(std::move(out));
}

}  // namespace radiance::jinja::detail
