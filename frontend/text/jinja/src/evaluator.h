// Renders a parsed template: executes statements into an output string and evaluates
// expressions with Python semantics. One Evaluator serves one render call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ast.h"
#include "radiance/jinja/template.h"
#include "radiance/jinja/value.h"
#include "scope.h"

namespace radiance::jinja::detail {

class Namespace;
class Macro;

class Evaluator {
public:
    Evaluator(const ParsedTemplate& tmpl, const Options& options);
    ~Evaluator();

    std::string render(const Value& context);

    // ---- services for builtins, macros and loop objects ----
    Value call(const Value& callee, const Args& args);
    Value apply_filter(const std::string& name, const Value& input, const Args& args);
    bool apply_test(const std::string& name, const Value& input, const Args& args);
    Value call_macro(Macro& macro, const Args& args);
    // Runs a recursive for loop again over `iterable` (loop(children) in the template).
    std::string run_recursive_loop(const ForStmt& stmt, const Value& iterable, const ScopePtr& scope, int depth);
    std::shared_ptr<Namespace> make_namespace();

    // Throw a runtime Error when a string or list being built would pass the limits.
    void check_string_size(size_t bytes) const;
    void check_list_size(size_t items) const;
    // Counts work; throws once the template has run max_steps.
    void tick() {
        if (++steps_ > options_.max_steps) fail_steps();
    }
    const Options& options() const { return options_; }

private:
    enum class Flow { Normal, Break, Continue };

    Flow exec_body(const Body& body, const ScopePtr& scope, std::string& out);
    Flow exec(const Stmt& stmt, const ScopePtr& scope, std::string& out);
    Flow exec_for(const ForStmt& stmt, const ScopePtr& scope, std::string& out);
    Flow run_loop(const ForStmt& stmt, const Value& iterable, const ScopePtr& scope, int depth, std::string& out);
    void exec_call_block(const CallBlockStmt& stmt, const ScopePtr& scope, std::string& out);
    std::string capture(const Body& body, const ScopePtr& scope);
    void assign(const Target& target, const Value& value, const ScopePtr& scope);
    void append_output(std::string& out, const Value& v);

    Value eval(const Expr& e, const ScopePtr& scope);
    Value eval_output(const Expr& e, const ScopePtr& scope);
    std::optional<Value> try_fold(const Expr& e, const ScopePtr& scope);
    Value eval_inner(const Expr& e, const ScopePtr& scope);
    Value eval_filter(const Expr& e, const ScopePtr& scope, const Value* input);
    Value eval_compare(const Expr& e, const ScopePtr& scope);
    Value eval_getitem(const Expr& e, const ScopePtr& scope);
    Args eval_args(const CallArgs& args, const ScopePtr& scope);

    [[noreturn]] void fail_steps() const;

    const ParsedTemplate& tmpl_;
    const Options& options_;
    uint64_t steps_ = 0;
    int recursion_ = 0;
    bool folding_ = false;  // inside try_fold: evaluating as Jinja's optimizer would
    std::vector<std::weak_ptr<Namespace>> namespaces_;
};

}  // namespace radiance::jinja::detail
