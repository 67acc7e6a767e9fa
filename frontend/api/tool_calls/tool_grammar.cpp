#include "tool_grammar.h"

#include <cctype>

#include "radiance/grammar/sources.h"

namespace radiance::frontend::tools {

namespace {

using ojson = nlohmann::ordered_json;

// A tool's schema moves under `base` in the combined schema: its own "#/..." references must
// follow it (pydantic's $defs, recursive "#").
void rebase_refs(ojson& s, const std::string& base) {
    if (s.is_object()) {
        for (auto it = s.begin(); it != s.end(); ++it) {
            if (it.key() == "$ref" && it->is_string()) {
                const std::string r = it->get<std::string>();
                if (r == "#")
                    *it = "#" + base;
                else if (r.rfind("#/", 0) == 0)
                    *it = "#" + base + r.substr(1);
            } else {
                rebase_refs(*it, base);
            }
        }
    } else if (s.is_array()) {
        for (auto& v : s) rebase_refs(v, base);
    }
}

// The combined schema: one call of any tool (inside an array for json_array markups). Returns
// the pointer prefix under which tool i's call sits ("/anyOf/" or "/items/anyOf/").
ojson combined_schema(const CallMarkup& m, const std::vector<ToolSpec>& tools, bool parallel, std::string& prefix) {
    prefix = m.json_array ? "/items/anyOf/" : "/anyOf/";
    ojson any = ojson::array();
    for (size_t i = 0; i < tools.size(); ++i) {
        ojson params = tools[i].parameters.is_null() ? ojson{{"type", "object"}} : tools[i].parameters;
        rebase_refs(params, prefix + std::to_string(i) + "/properties/" + m.arguments_key);
        ojson call = {{"type", "object"},
                      {"properties", {{"name", {{"const", tools[i].name}}}, {m.arguments_key, std::move(params)}}},
                      {"required", {"name", m.arguments_key}},
                      {"additionalProperties", false}};
        any.push_back(std::move(call));
    }
    if (!m.json_array) return {{"anyOf", std::move(any)}};
    ojson array = {{"type", "array"}, {"items", {{"anyOf", std::move(any)}}}, {"minItems", 1}};
    if (!parallel) array["maxItems"] = 1;
    return array;
}

// "/anyOf/2/properties/arguments/properties/age" -> tool 2, "/properties/age".
ToolSchemaError locate(const grammar::GrammarError& e, const std::string& prefix, const std::string& key) {
    const std::string& w = e.where;
    if (w.rfind(prefix, 0) == 0) {
        size_t i = prefix.size(), n = 0;
        while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) n = n * 10 + static_cast<size_t>(w[i++] - '0');
        const std::string inner = "/properties/" + key;
        if (w.compare(i, inner.size(), inner) == 0) {
            std::string rest = w.substr(i + inner.size());
            return ToolSchemaError(n, rest.empty() ? "/" : rest, e.what());
        }
        return ToolSchemaError(n, "/", e.what());
    }
    return ToolSchemaError(0, w, e.what());
}

}  // namespace

grammar::Grammar tool_call_grammar(const CallMarkup& m, const std::vector<ToolSpec>& tools, bool parallel) {
    if (tools.empty()) throw ToolSchemaError(0, "/", "no tool to call");
    std::string prefix;
    const ojson schema = combined_schema(m, tools, parallel, prefix);
    grammar::Grammar g;
    try {
        g = grammar::json_schema_grammar(schema);
    } catch (const grammar::GrammarError& e) {
        throw locate(e, prefix, m.arguments_key);
    }
    if (m.json_array) return g;
    // <begin> call <end>, then (<separator> <begin> call <end>)* when calls may come together.
    const int json_call = g.root;
    const int call = g.helper("tool-call", g.sequence({g.literal(m.begin), g.ref(json_call), g.literal(m.end)}));
    const int body = parallel ? g.sequence({g.ref(call), g.star(g.sequence({g.literal(m.separator), g.ref(call)}))}) : g.ref(call);
    g.root = g.rule("tool-calls");
    g.define(g.root, body);
    return g;
}

std::string tool_grammar_key(const CallMarkup& m, const std::vector<ToolSpec>& tools, bool parallel) {
    ojson key = {{"begin", m.begin},       {"end", m.end},          {"separator", m.separator},
                 {"key", m.arguments_key}, {"array", m.json_array}, {"parallel", parallel}};
    ojson list = ojson::array();
    for (const auto& t : tools) list.push_back({t.name, t.parameters});
    key["tools"] = std::move(list);
    return key.dump();
}

}  // namespace radiance::frontend::tools
