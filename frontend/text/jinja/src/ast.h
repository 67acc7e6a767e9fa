// The syntax tree the parser builds and the evaluator walks. Expressions are one node
// type whose fields are used according to `kind` (keeps parser and evaluator short);
// statements are small structs, one per statement kind.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "radiance/jinja/value.h"

namespace radiance::jinja::detail {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
    Literal,       // literal
    Name,          // name
    NamespaceRef,  // name.attr as an assignment target ({% set ns.attr = ... %}); attr in literal
    List,          // children: items
    Tuple,         // children: items
    Dict,          // children: key0, value0, key1, value1, ...
    GetAttr,       // children[0].name
    GetItem,       // children[0][children[1]]; children[1] may be a Slice node
    Slice,         // children: start, stop, step (each may be null)
    Call,          // children[0](args)
    Filter,        // children[0] | name(args); children[0] null in filter blocks
    Test,          // children[0] is name(args)
    Unary,         // op children[0]
    Binary,        // children[0] op children[1]
    And,           // children[0] and children[1]
    Or,            // children[0] or children[1]
    Concat,        // children joined with ~
    Compare,       // children[0] ops[0] children[1] ops[1] children[2] ...
    CondExpr,      // children[0] if children[1] else children[2] (else may be null)
};

enum class Op { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Neg, Pos, Not, Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

struct CallArgs {
    std::vector<ExprPtr> positional;
    std::vector<std::pair<std::string, ExprPtr>> keyword;
    ExprPtr star_args;    // *args
    ExprPtr star_kwargs;  // **kwargs
};

struct Expr {
    ExprKind kind;
    int line = 0;
    int depth = 1;  // height of this subtree, bounded by the parser
    // Built from literals only, so Jinja's optimizer evaluates it while compiling (see
    // Evaluator::try_fold). Conditional expressions qualify when their test does.
    bool constant = false;
    Value literal;
    std::string name;
    std::vector<ExprPtr> children;
    std::vector<Op> ops;
    Op op = Op::Add;
    CallArgs args;
};

enum class StmtKind { Text, Output, If, For, Set, SetBlock, Macro, CallBlock, FilterBlock, With, Break, Continue, Do, Scope };

struct Stmt {
    StmtKind kind;
    int line = 0;
    explicit Stmt(StmtKind k) : kind(k) {}
    virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// Left side of set / for / with: a name, ns.attr, or a (nested) tuple of targets.
struct Target {
    enum class Kind { Name, NamespaceAttr, Tuple } kind = Kind::Name;
    std::string name;
    std::string attr;
    std::vector<Target> items;
};

struct TextStmt : Stmt {
    TextStmt() : Stmt(StmtKind::Text) {}
    std::string text;
};

struct OutputStmt : Stmt {  // {{ expr }}, and {% print a, b %} which prints each expression
    OutputStmt() : Stmt(StmtKind::Output) {}
    std::vector<ExprPtr> exprs;
};

struct IfStmt : Stmt {  // conditions[i] guards bodies[i]; else_body runs when none holds
    IfStmt() : Stmt(StmtKind::If) {}
    std::vector<ExprPtr> conditions;
    std::vector<Body> bodies;
    Body else_body;
};

struct ForStmt : Stmt {
    ForStmt() : Stmt(StmtKind::For) {}
    Target target;
    ExprPtr iterable;
    ExprPtr filter;  // "for x in y if cond"
    Body body;
    Body else_body;
    bool recursive = false;
};

struct SetStmt : Stmt {
    SetStmt() : Stmt(StmtKind::Set) {}
    Target target;
    ExprPtr value;
};

struct SetBlockStmt : Stmt {  // {% set x | filters %}body{% endset %}
    SetBlockStmt() : Stmt(StmtKind::SetBlock) {}
    Target target;
    ExprPtr filter;  // Filter chain whose innermost operand is null, or null
    Body body;
};

struct MacroParam {
    std::string name;
    ExprPtr default_value;  // null when required
};

struct MacroStmt : Stmt {  // also the body of a call block ("caller")
    MacroStmt() : Stmt(StmtKind::Macro) {}
    std::string name;
    std::vector<MacroParam> params;
    Body body;
    // Jinja only accepts extra arguments when the body mentions varargs / kwargs.
    bool uses_varargs = false;
    bool uses_kwargs = false;
    bool uses_caller = false;
};

struct CallBlockStmt : Stmt {  // {% call(params) macro(args) %}body{% endcall %}
    CallBlockStmt() : Stmt(StmtKind::CallBlock) {}
    std::unique_ptr<MacroStmt> caller;
    ExprPtr call;
};

struct FilterBlockStmt : Stmt {
    FilterBlockStmt() : Stmt(StmtKind::FilterBlock) {}
    ExprPtr filter;  // Filter chain whose innermost operand is null
    Body body;
};

struct WithStmt : Stmt {
    WithStmt() : Stmt(StmtKind::With) {}
    std::vector<Target> targets;
    std::vector<ExprPtr> values;
    Body body;
};

struct LoopControlStmt : Stmt {  // break / continue
    explicit LoopControlStmt(StmtKind k) : Stmt(k) {}
};

struct DoStmt : Stmt {
    DoStmt() : Stmt(StmtKind::Do) {}
    ExprPtr expr;
};

// A body run in its own scope: transformers' {% generation %} block is a Jinja call
// block, so variables set inside it do not leak out; {% block %} renders in place.
struct ScopeStmt : Stmt {
    ScopeStmt() : Stmt(StmtKind::Scope) {}
    Body body;
};

struct ParsedTemplate {
    Body body;
};

}  // namespace radiance::jinja::detail
