#include "parser.h"

#include <algorithm>
#include <initializer_list>

#include "builtins.h"
#include "name_check.h"
#include "radiance/jinja/error.h"

namespace radiance::jinja::detail {

namespace {

using Names = std::initializer_list<std::string_view>;

class Parser {
public:
    Parser(std::vector<Token> tokens, const ParserOptions& opts) : toks_(std::move(tokens)), opts_(opts) {}

    std::unique_ptr<ParsedTemplate> parse() {
        auto tmpl = std::make_unique<ParsedTemplate>();
        tmpl->body = subparse({});
        if (cur().type != TokenType::Eof) fail("unexpected " + quoted(cur()));
        return tmpl;
    }

private:
    // ---- token stream -------------------------------------------------------------
    const Token& cur() const { return toks_[i_]; }
    const Token& look() const { return toks_[std::min(i_ + 1, toks_.size() - 1)]; }
    const Token& advance() {
        const Token& t = toks_[i_];
        if (i_ + 1 < toks_.size()) ++i_;
        return t;
    }
    bool is_op(std::string_view op) const { return cur().type == TokenType::Operator && cur().text == op; }
    bool is_name(std::string_view name) const { return cur().type == TokenType::Name && cur().text == name; }
    bool skip_op(std::string_view op) { return is_op(op) ? (advance(), true) : false; }
    bool skip_name(std::string_view name) { return is_name(name) ? (advance(), true) : false; }

    static std::string quoted(const Token& t) { return "'" + describe_token(t) + "'"; }

    [[noreturn]] void fail(const std::string& msg, int line = 0) const { throw Error(Error::Kind::Syntax, msg, line ? line : cur().line); }

    const Token& expect_op(std::string_view op) {
        if (!is_op(op)) fail("expected token '" + std::string(op) + "', got " + quoted(cur()));
        return advance();
    }
    const Token& expect_name(std::string_view name = {}) {
        if (cur().type != TokenType::Name || (!name.empty() && cur().text != name)) {
            const std::string what = name.empty() ? "name" : "'" + std::string(name) + "'";
            fail("expected token " + what + ", got " + quoted(cur()));
        }
        return advance();
    }
    void expect_type(TokenType type, const char* what) {
        if (cur().type != type) fail(std::string("expected token '") + what + "', got " + quoted(cur()));
        advance();
    }

    // Guards every recursive descent so nesting cannot overflow the C++ stack.
    struct NestingGuard {
        explicit NestingGuard(Parser& p) : p_(p) {
            if (++p_.nesting_ > kMaxParseNesting) p_.fail("template nested too deeply");
        }
        ~NestingGuard() { --p_.nesting_; }
        Parser& p_;
    };

    // ---- node construction --------------------------------------------------------
    ExprPtr node(ExprKind kind, int line) {
        auto e = std::make_unique<Expr>();
        e->kind = kind;
        e->line = line;
        return e;
    }

    // Computes the subtree height once the node is complete and bounds it: long operator
    // chains are parsed iteratively but evaluated (and destroyed) recursively.
    ExprPtr finish(ExprPtr e) {
        int depth = 0;
        auto see = [&](const ExprPtr& c) {
            if (c) depth = std::max(depth, c->depth);
        };
        for (const auto& c : e->children) see(c);
        for (const auto& c : e->args.positional) see(c);
        for (const auto& kv : e->args.keyword) see(kv.second);
        see(e->args.star_args);
        see(e->args.star_kwargs);
        e->depth = depth + 1;
        if (e->depth > kMaxExprDepth) fail("expression nested too deeply", e->line);
        e->constant = is_constant(*e);
        return e;
    }

    // Mirrors which nodes Jinja's as_const() can evaluate: no variables, no calls, no
    // filters that need the render context.
    static bool is_constant(const Expr& e) {
        auto all = [](const std::vector<ExprPtr>& v) {
            for (const auto& c : v)
                if (c && !c->constant) return false;
            return true;
        };
        switch (e.kind) {
        case ExprKind::Literal: return true;
        case ExprKind::Name:
        case ExprKind::NamespaceRef:
        case ExprKind::Call: return false;
        case ExprKind::CondExpr: return e.children[1]->constant;
        case ExprKind::Filter:
            if (!e.children[0] || filter_needs_context(e.name)) return false;
            break;
        default: break;
        }
        if (e.args.star_args || e.args.star_kwargs || !all(e.children) || !all(e.args.positional)) return false;
        for (const auto& kv : e.args.keyword)
            if (!kv.second->constant) return false;
        return true;
    }

    ExprPtr binary(ExprKind kind, Op op, ExprPtr lhs, ExprPtr rhs, int line) {
        auto e = node(kind, line);
        e->op = op;
        e->children.push_back(std::move(lhs));
        e->children.push_back(std::move(rhs));
        return finish(std::move(e));
    }

    // ---- statements ---------------------------------------------------------------
    Body subparse(Names end_tokens) {
        Body body;
        while (true) {
            const Token& t = cur();
            if (t.type == TokenType::Data) {
                auto s = std::make_unique<TextStmt>();
                s->line = t.line;
                s->text = t.text;
                body.push_back(std::move(s));
                advance();
            } else if (t.type == TokenType::VariableBegin) {
                advance();
                auto s = std::make_unique<OutputStmt>();
                s->line = cur().line;
                s->exprs.push_back(parse_tuple(false, true, false, false));
                expect_type(TokenType::VariableEnd, "end of print statement");
                body.push_back(std::move(s));
            } else if (t.type == TokenType::BlockBegin) {
                advance();
                if (cur().type == TokenType::Name && std::find(end_tokens.begin(), end_tokens.end(), cur().text) != end_tokens.end())
                    return body;
                body.push_back(parse_statement());
                expect_type(TokenType::BlockEnd, "end of statement block");
            } else if (t.type == TokenType::Eof) {
                return body;
            } else {
                fail("unexpected " + quoted(t));
            }
        }
    }

    Body parse_statements(Names end_tokens, bool drop_needle, const char* tag) {
        skip_op(":");
        expect_type(TokenType::BlockEnd, "end of statement block");
        Body body = subparse(end_tokens);
        if (cur().type == TokenType::Eof) {
            std::string wanted;
            for (auto n : end_tokens) wanted += (wanted.empty() ? "'" : " or '") + std::string(n) + "'";
            fail(std::string("Unexpected end of template. Jinja was looking for the following tags: ") + wanted +
                 ". The innermost block that needs to be closed is '" + tag + "'.");
        }
        if (drop_needle) advance();
        return body;
    }

    StmtPtr parse_statement() {
        NestingGuard guard(*this);
        const Token& t = cur();
        if (t.type != TokenType::Name) fail("tag name expected");
        const std::string tag = t.text;
        const int line = t.line;
        StmtPtr s;
        if (tag == "for")
            s = parse_for();
        else if (tag == "if")
            s = parse_if();
        else if (tag == "set")
            s = parse_set();
        else if (tag == "macro")
            s = parse_macro();
        else if (tag == "call")
            s = parse_call_block();
        else if (tag == "filter")
            s = parse_filter_block();
        else if (tag == "with")
            s = parse_with();
        else if (tag == "print")
            s = parse_print();
        else if (tag == "break" || tag == "continue")
            s = parse_loop_control(tag);
        else if (tag == "generation")
            s = parse_generation();
        else if (tag == "do" && opts_.enable_do)
            s = parse_do();
        else if (tag == "block")
            s = parse_block();
        else if (tag == "extends" || tag == "include" || tag == "import" || tag == "from" || tag == "autoescape")
            fail("tag '" + tag + "' is not supported (chat templates are rendered from a string, without a loader)");
        else
            fail("Encountered unknown tag '" + tag + "'.");
        s->line = line;
        return s;
    }

    StmtPtr parse_for() {
        advance();
        auto s = std::make_unique<ForStmt>();
        s->target = to_target(parse_tuple(true, true, false, false));
        expect_name("in");
        s->iterable = parse_tuple(false, false, false, false);
        if (skip_name("if")) s->filter = parse_expression(true);
        s->recursive = skip_name("recursive");
        ++loop_depth_;
        s->body = parse_statements({"endfor", "else"}, false, "for");
        --loop_depth_;
        if (advance().text != "endfor") s->else_body = parse_statements({"endfor"}, true, "for");
        return s;
    }

    StmtPtr parse_if() {
        advance();
        auto s = std::make_unique<IfStmt>();
        while (true) {
            s->conditions.push_back(parse_tuple(false, false, false, false));
            s->bodies.push_back(parse_statements({"elif", "else", "endif"}, false, "if"));
            const std::string which = advance().text;
            if (which == "elif") continue;
            if (which == "else") s->else_body = parse_statements({"endif"}, true, "if");
            break;
        }
        return s;
    }

    StmtPtr parse_set() {
        advance();
        Target target = to_target(parse_tuple(true, true, false, true));
        if (skip_op("=")) {
            auto s = std::make_unique<SetStmt>();
            s->target = std::move(target);
            s->value = parse_tuple(false, true, false, false);
            return s;
        }
        auto s = std::make_unique<SetBlockStmt>();
        s->target = std::move(target);
        if (is_op("|")) s->filter = parse_filter(nullptr, false);
        s->body = parse_statements({"endset"}, true, "set");
        return s;
    }

    void parse_signature(MacroStmt& m) {
        expect_op("(");
        while (!is_op(")")) {
            if (!m.params.empty()) expect_op(",");
            MacroParam p;
            p.name = expect_name().text;
            if (skip_op("=")) {
                p.default_value = parse_expression(true);
            } else if (!m.params.empty() && m.params.back().default_value) {
                fail("non-default argument follows default argument");
            }
            m.params.push_back(std::move(p));
        }
        expect_op(")");
    }

    // Parses a macro-like body: names it mentions decide whether varargs/kwargs/caller
    // are accepted, and loop controls inside do not reach an enclosing loop.
    Body parse_function_body(MacroStmt& m, const char* end_tag, const char* tag) {
        macro_stack_.push_back(&m);
        const int saved_loops = loop_depth_;
        loop_depth_ = 0;
        Body body = parse_statements({end_tag}, true, tag);
        loop_depth_ = saved_loops;
        macro_stack_.pop_back();
        return body;
    }

    StmtPtr parse_macro() {
        advance();
        auto s = std::make_unique<MacroStmt>();
        s->name = expect_name().text;
        parse_signature(*s);
        s->body = parse_function_body(*s, "endmacro", "macro");
        return s;
    }

    StmtPtr parse_call_block() {
        const int line = advance().line;
        auto s = std::make_unique<CallBlockStmt>();
        s->caller = std::make_unique<MacroStmt>();
        s->caller->name = "caller";
        s->caller->line = line;
        if (is_op("(")) parse_signature(*s->caller);
        s->call = parse_expression(true);
        if (s->call->kind != ExprKind::Call) fail("expected call", line);
        s->caller->body = parse_function_body(*s->caller, "endcall", "call");
        return s;
    }

    StmtPtr parse_filter_block() {
        advance();
        auto s = std::make_unique<FilterBlockStmt>();
        s->filter = parse_filter(nullptr, true);
        s->body = parse_statements({"endfilter"}, true, "filter");
        return s;
    }

    StmtPtr parse_with() {
        advance();
        auto s = std::make_unique<WithStmt>();
        while (cur().type != TokenType::BlockEnd) {
            if (!s->targets.empty()) expect_op(",");
            s->targets.push_back(to_target(parse_tuple(true, true, false, false)));
            expect_op("=");
            s->values.push_back(parse_expression(true));
        }
        s->body = parse_statements({"endwith"}, true, "with");
        return s;
    }

    StmtPtr parse_print() {
        advance();
        auto s = std::make_unique<OutputStmt>();
        while (cur().type != TokenType::BlockEnd) {
            if (!s->exprs.empty()) expect_op(",");
            s->exprs.push_back(parse_expression(true));
        }
        return s;
    }

    StmtPtr parse_loop_control(const std::string& tag) {
        advance();
        if (loop_depth_ == 0) fail("'" + tag + "' outside loop");
        return std::make_unique<LoopControlStmt>(tag == "break" ? StmtKind::Break : StmtKind::Continue);
    }

    StmtPtr parse_generation() {
        advance();
        auto s = std::make_unique<ScopeStmt>();
        const int saved_loops = loop_depth_;
        loop_depth_ = 0;
        s->body = parse_statements({"endgeneration"}, true, "generation");
        loop_depth_ = saved_loops;
        return s;
    }

    // Without template inheritance a block just renders where it stands.
    StmtPtr parse_block() {
        advance();
        const std::string name = expect_name().text;
        skip_name("scoped");
        skip_name("required");
        auto s = std::make_unique<ScopeStmt>();
        const int saved_loops = loop_depth_;
        loop_depth_ = 0;
        s->body = parse_statements({"endblock"}, true, "block");
        loop_depth_ = saved_loops;
        skip_name(name);
        return s;
    }

    StmtPtr parse_do() {
        advance();
        auto s = std::make_unique<DoStmt>();
        s->expr = parse_tuple(false, true, false, false);
        return s;
    }

    Target to_target(ExprPtr e) {
        Target t;
        switch (e->kind) {
        case ExprKind::Name:
            t.kind = Target::Kind::Name;
            t.name = e->name;
            break;
        case ExprKind::NamespaceRef:
            t.kind = Target::Kind::NamespaceAttr;
            t.name = e->name;
            t.attr = e->literal.as_string();
            break;
        case ExprKind::Tuple:
            t.kind = Target::Kind::Tuple;
            for (auto& c : e->children) t.items.push_back(to_target(std::move(c)));
            break;
        default: fail("can't assign to this expression", e->line);
        }
        if (t.kind == Target::Kind::Name && (t.name == "true" || t.name == "false" || t.name == "none"))
            fail("can't assign to '" + t.name + "'", e->line);
        return t;
    }

    // ---- expressions --------------------------------------------------------------
    // Jinja passes extra end rules here ("in" after a for target, "recursive" after the
    // iterable), but its test_any(*args) receives them as one tuple and never matches, so
    // in practice only these three tokens end a tuple: `for a, in x` is a syntax error.
    bool is_tuple_end() const {
        const Token& t = cur();
        return t.type == TokenType::VariableEnd || t.type == TokenType::BlockEnd || is_op(")");
    }

    // Jinja's parse_tuple: a single expression, or a tuple when commas separate several.
    // `simplified` parses only primaries (assignment targets).
    ExprPtr parse_tuple(bool simplified, bool with_condexpr, bool explicit_parens, bool with_namespace) {
        const int line = cur().line;
        std::vector<ExprPtr> items;
        bool is_tuple = false;
        while (true) {
            if (!items.empty()) expect_op(",");
            if (is_tuple_end()) break;
            items.push_back(simplified ? parse_primary(with_namespace) : parse_expression(with_condexpr));
            if (is_op(",")) {
                is_tuple = true;
            } else {
                break;
            }
        }
        if (!is_tuple) {
            if (!items.empty()) return std::move(items[0]);
            if (!explicit_parens) fail("Expected an expression, got " + quoted(cur()));
        }
        auto e = node(ExprKind::Tuple, line);
        e->children = std::move(items);
        return finish(std::move(e));
    }

    ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

    ExprPtr parse_condexpr() {
        NestingGuard guard(*this);
        int line = cur().line;
        ExprPtr expr1 = parse_or();
        while (skip_name("if")) {
            ExprPtr cond = parse_or();
            ExprPtr otherwise = skip_name("else") ? parse_condexpr() : nullptr;
            auto e = node(ExprKind::CondExpr, line);
            e->children.push_back(std::move(expr1));
            e->children.push_back(std::move(cond));
            e->children.push_back(std::move(otherwise));
            expr1 = finish(std::move(e));
            line = cur().line;
        }
        return expr1;
    }

    ExprPtr parse_or() {
        ExprPtr left = parse_and();
        while (is_name("or")) {
            const int line = advance().line;
            left = binary(ExprKind::Or, Op::Add, std::move(left), parse_and(), line);
        }
        return left;
    }

    ExprPtr parse_and() {
        ExprPtr left = parse_not();
        while (is_name("and")) {
            const int line = advance().line;
            left = binary(ExprKind::And, Op::Add, std::move(left), parse_not(), line);
        }
        return left;
    }

    ExprPtr parse_not() {
        if (is_name("not")) {
            NestingGuard guard(*this);
            const int line = advance().line;
            return unary(Op::Not, parse_not(), line);
        }
        return parse_compare();
    }

    ExprPtr unary(Op op, ExprPtr operand, int line) {
        auto e = node(ExprKind::Unary, line);
        e->op = op;
        e->children.push_back(std::move(operand));
        return finish(std::move(e));
    }

    ExprPtr parse_compare() {
        const int line = cur().line;
        ExprPtr first = parse_math1();
        std::vector<Op> ops;
        std::vector<ExprPtr> operands;
        while (true) {
            Op op;
            if (is_op("=="))
                op = Op::Eq;
            else if (is_op("!="))
                op = Op::Ne;
            else if (is_op("<"))
                op = Op::Lt;
            else if (is_op("<="))
                op = Op::Le;
            else if (is_op(">"))
                op = Op::Gt;
            else if (is_op(">="))
                op = Op::Ge;
            else if (is_name("in"))
                op = Op::In;
            else if (is_name("not") && look().type == TokenType::Name && look().text == "in") {
                advance();
                op = Op::NotIn;
            } else {
                break;
            }
            advance();
            ops.push_back(op);
            operands.push_back(parse_math1());
        }
        if (ops.empty()) return first;
        auto e = node(ExprKind::Compare, line);
        e->children.push_back(std::move(first));
        for (auto& o : operands) e->children.push_back(std::move(o));
        e->ops = std::move(ops);
        return finish(std::move(e));
    }

    ExprPtr parse_math1() {
        ExprPtr left = parse_concat();
        while (is_op("+") || is_op("-")) {
            const Op op = cur().text == "+" ? Op::Add : Op::Sub;
            const int line = advance().line;
            left = binary(ExprKind::Binary, op, std::move(left), parse_concat(), line);
        }
        return left;
    }

    ExprPtr parse_concat() {
        const int line = cur().line;
        ExprPtr first = parse_math2();
        if (!is_op("~")) return first;
        auto e = node(ExprKind::Concat, line);
        e->children.push_back(std::move(first));
        while (skip_op("~")) e->children.push_back(parse_math2());
        return finish(std::move(e));
    }

    ExprPtr parse_math2() {
        ExprPtr left = parse_pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            const std::string& t = cur().text;
            const Op op = t == "*" ? Op::Mul : t == "/" ? Op::Div : t == "//" ? Op::FloorDiv : Op::Mod;
            const int line = advance().line;
            left = binary(ExprKind::Binary, op, std::move(left), parse_pow(), line);
        }
        return left;
    }

    ExprPtr parse_pow() {
        ExprPtr left = parse_unary(true);
        while (is_op("**")) {
            const int line = advance().line;
            left = binary(ExprKind::Binary, Op::Pow, std::move(left), parse_unary(true), line);
        }
        return left;
    }

    ExprPtr parse_unary(bool with_filter) {
        NestingGuard guard(*this);
        ExprPtr e;
        if (is_op("-") || is_op("+")) {
            const Op op = cur().text == "-" ? Op::Neg : Op::Pos;
            const int line = advance().line;
            e = unary(op, parse_unary(false), line);
        } else {
            e = parse_primary(false);
        }
        e = parse_postfix(std::move(e));
        if (with_filter) e = parse_filter_expr(std::move(e));
        return e;
    }

    ExprPtr parse_primary(bool with_namespace) {
        NestingGuard guard(*this);
        const Token& t = cur();
        const int line = t.line;
        switch (t.type) {
        case TokenType::Name: {
            const std::string name = advance().text;
            if (name == "true" || name == "True" || name == "false" || name == "False") {
                auto e = node(ExprKind::Literal, line);
                e->literal = Value(name == "true" || name == "True");
                return finish(std::move(e));
            }
            if (name == "none" || name == "None") {
                auto e = node(ExprKind::Literal, line);
                e->literal = Value::none();
                return finish(std::move(e));
            }
            if (with_namespace && is_op(".")) {
                advance();
                auto e = node(ExprKind::NamespaceRef, line);
                e->name = name;
                e->literal = Value(expect_name().text);
                return finish(std::move(e));
            }
            note_name_use(name);
            auto e = node(ExprKind::Name, line);
            e->name = name;
            return finish(std::move(e));
        }
        case TokenType::String: {
            std::string text;
            while (cur().type == TokenType::String) text += advance().text;  // "a" "b" is "ab"
            auto e = node(ExprKind::Literal, line);
            e->literal = Value(std::move(text));
            return finish(std::move(e));
        }
        case TokenType::Integer:
        case TokenType::Float: {
            const Token& num = advance();
            auto e = node(ExprKind::Literal, line);
            e->literal = num.type == TokenType::Integer ? Value(num.int_value) : Value(num.float_value);
            return finish(std::move(e));
        }
        case TokenType::Operator:
            if (t.text == "(") {
                advance();
                ExprPtr e = parse_tuple(false, true, true, false);
                expect_op(")");
                return e;
            }
            if (t.text == "[") return parse_list();
            if (t.text == "{") return parse_dict();
            break;
        default: break;
        }
        fail("unexpected " + quoted(t));
    }

    void note_name_use(const std::string& name) {
        if (macro_stack_.empty()) return;
        MacroStmt* m = macro_stack_.back();
        if (name == "varargs") m->uses_varargs = true;
        if (name == "kwargs") m->uses_kwargs = true;
        if (name == "caller") m->uses_caller = true;
    }

    ExprPtr parse_list() {
        auto e = node(ExprKind::List, advance().line);
        while (!is_op("]")) {
            if (!e->children.empty()) expect_op(",");
            if (is_op("]")) break;
            e->children.push_back(parse_expression(true));
        }
        expect_op("]");
        return finish(std::move(e));
    }

    ExprPtr parse_dict() {
        auto e = node(ExprKind::Dict, advance().line);
        while (!is_op("}")) {
            if (!e->children.empty()) expect_op(",");
            if (is_op("}")) break;
            e->children.push_back(parse_expression(true));
            expect_op(":");
            e->children.push_back(parse_expression(true));
        }
        expect_op("}");
        return finish(std::move(e));
    }

    ExprPtr parse_postfix(ExprPtr e) {
        while (true) {
            if (is_op(".") || is_op("[")) {
                e = parse_subscript(std::move(e));
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr parse_filter_expr(ExprPtr e) {
        while (true) {
            if (is_op("|")) {
                e = parse_filter(std::move(e), false);
            } else if (is_name("is")) {
                e = parse_test(std::move(e));
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr parse_subscript(ExprPtr obj) {
        const Token& t = advance();
        const int line = t.line;
        if (t.text == ".") {
            const Token& attr = advance();
            if (attr.type == TokenType::Name) {
                auto e = node(ExprKind::GetAttr, line);
                e->children.push_back(std::move(obj));
                e->name = attr.text;
                return finish(std::move(e));
            }
            if (attr.type != TokenType::Integer) fail("expected name or number", attr.line);
            auto index = node(ExprKind::Literal, attr.line);
            index->literal = Value(attr.int_value);
            auto e = node(ExprKind::GetItem, line);
            e->children.push_back(std::move(obj));
            e->children.push_back(finish(std::move(index)));
            return finish(std::move(e));
        }
        std::vector<ExprPtr> args;
        while (!is_op("]")) {
            if (!args.empty()) expect_op(",");
            args.push_back(parse_subscribed());
        }
        expect_op("]");
        auto e = node(ExprKind::GetItem, line);
        e->children.push_back(std::move(obj));
        if (args.size() == 1) {
            e->children.push_back(std::move(args[0]));
        } else {
            auto tuple = node(ExprKind::Tuple, line);
            tuple->children = std::move(args);
            e->children.push_back(finish(std::move(tuple)));
        }
        return finish(std::move(e));
    }

    ExprPtr parse_subscribed() {
        const int line = cur().line;
        std::vector<ExprPtr> parts;  // start, stop, step
        if (skip_op(":")) {
            parts.push_back(nullptr);
        } else {
            ExprPtr first = parse_expression(true);
            if (!skip_op(":")) return first;
            parts.push_back(std::move(first));
        }
        if (is_op(":") || is_op("]") || is_op(",")) {
            parts.push_back(nullptr);
        } else {
            parts.push_back(parse_expression(true));
        }
        if (skip_op(":")) {
            parts.push_back((is_op("]") || is_op(",")) ? nullptr : parse_expression(true));
        } else {
            parts.push_back(nullptr);
        }
        auto e = node(ExprKind::Slice, line);
        e->children = std::move(parts);
        return finish(std::move(e));
    }

    CallArgs parse_call_args() {
        const int line = expect_op("(").line;
        CallArgs args;
        bool require_comma = false;
        auto ensure = [&](bool ok) {
            if (!ok) fail("invalid syntax for function call expression", line);
        };
        while (!is_op(")")) {
            if (require_comma) {
                expect_op(",");
                if (is_op(")")) break;  // trailing comma
            }
            if (skip_op("*")) {
                ensure(!args.star_args && !args.star_kwargs);
                args.star_args = parse_expression(true);
            } else if (skip_op("**")) {
                ensure(!args.star_kwargs);
                args.star_kwargs = parse_expression(true);
            } else if (cur().type == TokenType::Name && look().type == TokenType::Operator && look().text == "=") {
                ensure(!args.star_kwargs);
                std::string key = advance().text;
                advance();
                for (const auto& kw : args.keyword)  // Python rejects f(a=1, a=2) when compiling
                    if (kw.first == key) fail("keyword argument repeated: " + key);
                args.keyword.emplace_back(std::move(key), parse_expression(true));
            } else {
                ensure(!args.star_args && !args.star_kwargs && args.keyword.empty());
                args.positional.push_back(parse_expression(true));
            }
            require_comma = true;
        }
        expect_op(")");
        return args;
    }

    ExprPtr parse_call(ExprPtr callee) {
        auto e = node(ExprKind::Call, cur().line);
        e->args = parse_call_args();
        e->children.push_back(std::move(callee));
        return finish(std::move(e));
    }

    std::string dotted_name() {
        std::string name = expect_name().text;
        while (skip_op(".")) name += "." + expect_name().text;
        return name;
    }

    // `operand` is null for filter blocks and block sets (the body is the input).
    ExprPtr parse_filter(ExprPtr operand, bool start_inline) {
        while (is_op("|") || start_inline) {
            if (!start_inline) advance();
            start_inline = false;
            const int line = cur().line;
            auto e = node(ExprKind::Filter, line);
            e->name = dotted_name();
            if (is_op("(")) e->args = parse_call_args();
            e->children.push_back(std::move(operand));
            operand = finish(std::move(e));
        }
        return operand;
    }

    ExprPtr parse_test(ExprPtr operand) {
        const int line = advance().line;
        const bool negated = skip_name("not");
        auto e = node(ExprKind::Test, line);
        e->name = dotted_name();
        const Token& t = cur();
        const bool arg_start = t.type == TokenType::Name || t.type == TokenType::String || t.type == TokenType::Integer ||
                               t.type == TokenType::Float || is_op("(") || is_op("[") || is_op("{");
        if (is_op("(")) {
            e->args = parse_call_args();
        } else if (arg_start && !is_name("else") && !is_name("or") && !is_name("and")) {
            // `x is divisibleby 3`, `x is sameas false`: one argument without parentheses.
            if (is_name("is")) fail("You cannot chain multiple tests with is");
            e->args.positional.push_back(parse_postfix(parse_primary(false)));
        }
        e->children.push_back(std::move(operand));
        ExprPtr test = finish(std::move(e));
        return negated ? unary(Op::Not, std::move(test), line) : std::move(test);
    }

    std::vector<Token> toks_;
    size_t i_ = 0;
    ParserOptions opts_;
    int nesting_ = 0;
    int loop_depth_ = 0;
    std::vector<MacroStmt*> macro_stack_;
};

}  // namespace

std::unique_ptr<ParsedTemplate> parse_template(std::string_view source, const ParserOptions& opts) {
    auto tmpl = Parser(tokenize(source, opts.lexer), opts).parse();
    check_filter_and_test_names(*tmpl);
    return tmpl;
}

}  // namespace radiance::jinja::detail
