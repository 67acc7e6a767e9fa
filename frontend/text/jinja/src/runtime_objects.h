// The reference objects templates handle: namespace(), the loop variable, macros,
// builtin functions and bound methods, cycler() and joiner().
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ast.h"
#include "radiance/jinja/value.h"
#include "scope.h"

namespace radiance::jinja::detail {

class Evaluator;

// namespace(a=1): the one object templates may assign attributes to ({% set ns.a = 2 %}).
class Namespace : public Object {
public:
    std::string type_name() const override { return "Namespace"; }
    std::string repr() const override;
    Value get_attr(const std::string& name) const override;
    void set_attr(const std::string& name, Value value);
    // Drops the attributes: breaks reference cycles (ns.self = ns) when a render ends.
    void clear() { attrs_.clear(); }

private:
    std::vector<std::pair<std::string, Value>> attrs_;
};

// A C++ function callable from templates: globals such as range() and bound methods
// such as "abc".upper.
class BuiltinFunction : public Object {
public:
    using Fn = std::function<Value(Evaluator&, const Args&)>;
    BuiltinFunction(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
    std::string type_name() const override { return "builtin_function_or_method"; }
    std::string repr() const override { return "<built-in function " + name_ + ">"; }
    bool is_callable() const override { return true; }
    Value call(Evaluator& ev, const Args& args) override { return fn_(ev, args); }

private:
    std::string name_;
    Fn fn_;
};

Value make_function(std::string name, BuiltinFunction::Fn fn);

// A macro, or the body of a call block bound as `caller`. It sees the scope it was
// defined in; that scope is held weakly because the macro itself lives in it.
class Macro : public Object {
public:
    Macro(const MacroStmt* stmt, std::weak_ptr<Scope> closure) : stmt_(stmt), closure_(std::move(closure)) {}
    std::string type_name() const override { return "Macro"; }
    std::string repr() const override { return "<Macro '" + stmt_->name + "'>"; }
    Value get_attr(const std::string& name) const override;
    bool is_callable() const override { return true; }
    Value call(Evaluator& ev, const Args& args) override;

    const MacroStmt& stmt() const { return *stmt_; }
    std::shared_ptr<Scope> closure() const { return closure_.lock(); }

private:
    const MacroStmt* stmt_;
    std::weak_ptr<Scope> closure_;
};

// The `loop` variable of a for loop.
class LoopContext : public Object {
public:
    LoopContext(ValueList items, int depth, const ForStmt* stmt, std::weak_ptr<Scope> scope)
        : items_(std::move(items)), depth_(depth), stmt_(stmt), scope_(std::move(scope)) {}
    std::string type_name() const override { return "LoopContext"; }
    std::string repr() const override;
    Value get_attr(const std::string& name) const override;
    // loop(children) re-enters a recursive loop one level deeper.
    bool is_callable() const override { return stmt_->recursive; }
    Value call(Evaluator& ev, const Args& args) override;

    void set_index(size_t i) { index_ = i; }
    const ValueList& items() const { return items_; }

private:
    ValueList items_;
    size_t index_ = 0;
    int depth_;
    const ForStmt* stmt_;
    std::weak_ptr<Scope> scope_;
    std::shared_ptr<Value> last_changed_ = std::make_shared<Value>();  // state of loop.changed()
};

// What Jinja's select/map/unique/items/batch/slice filters (generators) and the reverse
// filter (a reverse iterator) return: always truthy, no len(), consumed by iterating.
class Iterator : public Object {
public:
    Iterator(ValueList items, std::string type) : items_(std::move(items)), type_(std::move(type)) {}
    std::string type_name() const override { return type_; }
    std::string repr() const override { return "<" + type_ + " object>"; }
    bool next(Value& out) {
        if (pos_ >= items_.size()) return false;
        out = items_[pos_++];
        return true;
    }
    // The items not consumed yet; consumes them.
    ValueList take_rest();

private:
    ValueList items_;
    size_t pos_ = 0;
    std::string type_;
};

Value make_iterator(ValueList items, std::string type = "generator");

}  // namespace radiance::jinja::detail
