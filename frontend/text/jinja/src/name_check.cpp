#include "name_check.h"

#include "builtins.h"
#include "radiance/jinja/error.h"

namespace radiance::jinja::detail {

namespace {

class NameChecker {
public:
    void body(const Body& b, bool soft) {
        for (const auto& s : b) stmt(*s, soft);
    }

private:
    void stmt(const Stmt& s, bool soft) {
        switch (s.kind) {
        case StmtKind::Output:
            for (const auto& e : static_cast<const OutputStmt&>(s).exprs) expr(e.get(), soft);
            break;
        case StmtKind::If: {
            const auto& x = static_cast<const IfStmt&>(s);
            for (size_t i = 0; i < x.conditions.size(); ++i) {
                expr(x.conditions[i].get(), true);
                body(x.bodies[i], true);
            }
            body(x.else_body, true);
            break;
        }
        case StmtKind::For: {
            const auto& x = static_cast<const ForStmt&>(s);
            expr(x.iterable.get(), soft);
            expr(x.filter.get(), false);
            body(x.body, false);
            body(x.else_body, false);
            break;
        }
        case StmtKind::Set: expr(static_cast<const SetStmt&>(s).value.get(), soft); break;
        case StmtKind::SetBlock:
            expr(static_cast<const SetBlockStmt&>(s).filter.get(), false);
            body(static_cast<const SetBlockStmt&>(s).body, false);
            break;
        case StmtKind::Macro: macro(static_cast<const MacroStmt&>(s)); break;
        case StmtKind::CallBlock:
            expr(static_cast<const CallBlockStmt&>(s).call.get(), soft);
            macro(*static_cast<const CallBlockStmt&>(s).caller);
            break;
        case StmtKind::FilterBlock:
            expr(static_cast<const FilterBlockStmt&>(s).filter.get(), false);
            body(static_cast<const FilterBlockStmt&>(s).body, false);
            break;
        case StmtKind::With:
            for (const auto& v : static_cast<const WithStmt&>(s).values) expr(v.get(), soft);
            body(static_cast<const WithStmt&>(s).body, false);
            break;
        case StmtKind::Do: expr(static_cast<const DoStmt&>(s).expr.get(), soft); break;
        case StmtKind::Scope: body(static_cast<const ScopeStmt&>(s).body, false); break;
        default: break;
        }
    }

    void macro(const MacroStmt& m) {
        for (const auto& p : m.params) expr(p.default_value.get(), false);
        body(m.body, false);
    }

    void expr(const Expr* e, bool soft) {
        if (!e) return;
        if (e->kind == ExprKind::CondExpr) soft = true;
        if (!soft && e->kind == ExprKind::Filter && !find_filter(e->name))
            throw Error(Error::Kind::Syntax, "No filter named '" + e->name + "'.", e->line);
        if (!soft && e->kind == ExprKind::Test && !find_test(e->name))
            throw Error(Error::Kind::Syntax, "No test named '" + e->name + "'.", e->line);
        for (const auto& c : e->children) expr(c.get(), soft);
        for (const auto& c : e->args.positional) expr(c.get(), soft);
        for (const auto& kv : e->args.keyword) expr(kv.second.get(), soft);
        expr(e->args.star_args.get(), soft);
        expr(e->args.star_kwargs.get(), soft);
    }
};

}  // namespace

void check_filter_and_test_names(const ParsedTemplate& tmpl) { NameChecker().body(tmpl.body, false); }

}  // namespace radiance::jinja::detail
