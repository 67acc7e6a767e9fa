// json_schema.cpp: a JSON Schema into a grammar of the JSON texts it accepts. Objects list their
// properties in the schema's order (required ones always, optional ones maybe), then any extra
// properties additionalProperties allows; `$ref`s to the schema's own definitions become rules
// (so recursive schemas work); strings take lengths, patterns and common formats; integers take
// their bounds. What cannot be honoured is refused with the place it is at, never ignored silently
// (annotations such as title and description are ignored, as the standard says).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "json_pieces.h"
#include "radiance/grammar/sources.h"
#include "schema_strings.h"

namespace radiance::grammar {

namespace {

using ojson = nlohmann::ordered_json;
constexpr int kMaxDepth = 64;
constexpr int64_t kMaxCount = 10000;  // lengths and item counts a schema may bound by

class SchemaConverter {
public:
    explicit SchemaConverter(const ojson& root) : root_(root), json_(g_) {}

    Grammar run() {
        const int body = visit(root_, "", 0);
        g_.root = g_.rule("root");
        g_.define(g_.root, body);
        return std::move(g_);
    }

private:
    [[noreturn]] static void fail(const std::string& path, const std::string& what) { throw GrammarError(what, path.empty() ? "/" : path); }

    static std::string escape_pointer(const std::string& key) {
        std::string out;
        for (char c : key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
        return out;
    }

    int64_t count(const ojson& s, const char* key, const std::string& path, int64_t fallback) {
        auto it = s.find(key);
        if (it == s.end()) return fallback;
        // checked as a double before any conversion: a float such as 1e300 converted to an integer
        // first would be undefined behaviour
        if (!it->is_number()) fail(path + "/" + key, std::string("'") + key + "' must be a non-negative integer");
        const double d = it->get<double>();
        if (d != std::floor(d) || d < 0) fail(path + "/" + key, std::string("'") + key + "' must be a non-negative integer");
        if (d > static_cast<double>(kMaxCount))
            fail(path + "/" + key, std::string("'") + key + "' above " + std::to_string(kMaxCount) + " is not supported");
        return static_cast<int64_t>(d);
    }

    // A literal JSON value as compact text.
    int literal_value(const ojson& v) { return g_.literal(v.dump(-1, ' ', false, nlohmann::detail::error_handler_t::strict)); }

    int visit(const ojson& s, const std::string& path, int depth) {
        if (depth > kMaxDepth) fail(path, "the schema nests deeper than " + std::to_string(kMaxDepth) + " levels");
        if (s.is_boolean()) return s.get<bool>() ? json_.value() : g_.nothing();
        if (!s.is_object()) fail(path, "a schema must be an object or a boolean");
        for (const char* k : {"not", "if", "then", "else", "patternProperties", "dependentSchemas", "unevaluatedProperties",
                              "unevaluatedItems", "contains", "propertyNames", "dependencies"})
            if (s.contains(k)) fail(path + "/" + k, std::string("'") + k + "' is not supported");
        if (auto r = s.find("$ref"); r != s.end()) return reference(*r, path + "/$ref", depth);
        if (auto c = s.find("const"); c != s.end()) return literal_value(*c);
        if (auto e = s.find("enum"); e != s.end()) {
            if (!e->is_array()) fail(path + "/enum", "'enum' must be an array");
            if (e->empty()) fail(path + "/enum", "an empty 'enum' allows no value");
            std::vector<int> alts;
            for (const auto& v : *e) alts.push_back(literal_value(v));
            return g_.choice(std::move(alts));
        }
        for (const char* k : {"anyOf", "oneOf"})
            if (auto a = s.find(k); a != s.end()) {
                if (!a->is_array() || a->empty()) fail(path + "/" + k, std::string("'") + k + "' must be a non-empty array");
                // keywords beside anyOf apply to every branch: merged into each
                std::vector<int> alts;
                for (size_t i = 0; i < a->size(); ++i) {
                    ojson branch = (*a)[i];
                    if (branch.is_object())
                        for (auto it = s.begin(); it != s.end(); ++it)
                            if (it.key() != k && !branch.contains(it.key())) branch[it.key()] = it.value();
                    alts.push_back(visit(branch, path + "/" + k + "/" + std::to_string(i), depth + 1));
                }
                return g_.choice(std::move(alts));
            }
        if (auto a = s.find("allOf"); a != s.end()) return visit(merge_all_of(s, *a, path + "/allOf"), path, depth + 1);
        auto t = s.find("type");
        if (t != s.end() && t->is_array()) {
            if (t->empty()) fail(path + "/type", "an empty 'type' list allows no value");
            std::vector<int> alts;
            for (const auto& one : *t) {
                ojson branch = s;
                branch["type"] = one;
                alts.push_back(visit(branch, path, depth + 1));
            }
            return g_.choice(std::move(alts));
        }
        std::string type;
        if (t != s.end()) {
            if (!t->is_string()) fail(path + "/type", "'type' must be a string or an array of strings");
            type = t->get<std::string>();
        } else if (s.contains("properties") || s.contains("additionalProperties") || s.contains("required")) {
            type = "object";
        } else if (s.contains("items") || s.contains("prefixItems") || s.contains("minItems") || s.contains("maxItems")) {
            type = "array";
        } else if (s.contains("pattern") || s.contains("format") || s.contains("minLength") || s.contains("maxLength")) {
            type = "string";
        } else if (s.contains("minimum") || s.contains("maximum") || s.contains("exclusiveMinimum") || s.contains("exclusiveMaximum")) {
            type = "number";
        } else {
            return json_.value();
        }
        if (type == "object") return object(s, path, depth);
        if (type == "array") return array(s, path, depth);
        if (type == "string") return string(s, path);
        if (type == "integer") return integer(s, path);
        if (type == "number") return number(s, path);
        if (type == "boolean") return g_.choice({g_.literal("true"), g_.literal("false")});
        if (type == "null") return g_.literal("null");
        fail(path + "/type", "unknown type '" + type + "'");
    }

    // allOf: the schemas' keywords merged (properties and required joined); enough for the usual
    // use of composing objects.
    ojson merge_all_of(const ojson& s, const ojson& all, const std::string& path) {
        if (!all.is_array() || all.empty()) fail(path, "'allOf' must be a non-empty array");
        ojson out = s;
        out.erase("allOf");
        for (size_t i = 0; i < all.size(); ++i) {
            ojson part = all[i];
            if (part.is_object() && part.contains("$ref")) part = resolve(part["$ref"], path + "/" + std::to_string(i) + "/$ref");
            if (!part.is_object()) fail(path + "/" + std::to_string(i), "'allOf' entries must be objects");
            for (auto it = part.begin(); it != part.end(); ++it) {
                if (it.key() == "properties" && out.contains("properties")) {
                    for (auto p = it->begin(); p != it->end(); ++p) out["properties"][p.key()] = p.value();
                } else if (it.key() == "required" && out.contains("required")) {
                    for (const auto& r : *it) out["required"].push_back(r);
                } else {
                    out[it.key()] = it.value();
                }
            }
        }
        return out;
    }

    const ojson& resolve(const ojson& ref, const std::string& path) {
        if (!ref.is_string()) fail(path, "'$ref' must be a string");
        const std::string r = ref.get<std::string>();
        if (r.empty() || r[0] != '#') fail(path, "only references inside the schema ('#/...') are supported, not '" + r + "'");
        const ojson* at = &root_;
        size_t i = 1;
        while (i < r.size()) {
            if (r[i] != '/') fail(path, "'" + r + "' is not a JSON pointer");
            size_t j = r.find('/', i + 1);
            if (j == std::string::npos) j = r.size();
            std::string key;
            for (size_t k = i + 1; k < j; ++k) {
                if (r[k] == '~' && k + 1 < j) {
                    key += r[k + 1] == '1' ? '/' : '~';
                    ++k;
                } else {
                    key += r[k];
                }
            }
            if (at->is_object() && at->contains(key)) {
                at = &(*at)[key];
            } else if (at->is_array() && !key.empty() && std::all_of(key.begin(), key.end(), ::isdigit) && std::stoul(key) < at->size()) {
                at = &(*at)[std::stoul(key)];
            } else {
                fail(path, "'" + r + "' points at nothing in the schema");
            }
            i = j;
        }
        return *at;
    }

    int reference(const ojson& ref, const std::string& path, int depth) {
        const ojson& target = resolve(ref, path);
        const std::string r = ref.get<std::string>();
        auto it = refs_.find(r);
        if (it != refs_.end()) return g_.ref(it->second);
        std::string name = "ref";
        for (char c : r.substr(r.rfind('/') + 1))
            if (std::isalnum(static_cast<unsigned char>(c))) name += c == '_' ? '-' : c;
        const int rule = g_.helper(name, -1);
        refs_[r] = rule;
        g_.define(rule, visit(target, r.substr(1), depth + 1));
        return g_.ref(rule);
    }

    int object(const ojson& s, const std::string& path, int depth) {
        const ojson empty = ojson::object();
        auto pit = s.find("properties");
        if (pit != s.end() && !pit->is_object()) fail(path + "/properties", "'properties' must be an object");
        const ojson& props = pit != s.end() ? *pit : empty;
        std::set<std::string> required;
        if (auto r = s.find("required"); r != s.end()) {
            if (!r->is_array()) fail(path + "/required", "'required' must be an array of names");
            for (const auto& n : *r) {
                if (!n.is_string()) fail(path + "/required", "'required' must be an array of names");
                required.insert(n.get<std::string>());
            }
        }
        // The properties in order; required ones not listed take any value.
        struct Prop {
            std::string name;
            int value;
            bool required;
        };
        std::vector<Prop> list;
        for (auto it = props.begin(); it != props.end(); ++it) {
            const std::string p = path + "/properties/" + escape_pointer(it.key());
            const bool req = required.count(it.key()) > 0;
            if (it->is_boolean() && !it->get<bool>()) {
                if (req) fail(p, "property '" + it.key() + "' is required but its schema is false");
                continue;
            }
            list.push_back({it.key(), visit(*it, p, depth + 1), req});
        }
        for (const auto& r : required)
            if (!props.contains(r)) list.push_back({r, json_.value(), true});
        // Extra properties: a schema for them, or none (the default when properties are listed,
        // as OpenAI's strict mode requires and xgrammar does).
        int extra = -1;
        auto ap = s.find("additionalProperties");
        if (ap == s.end()) {
            if (props.empty() && required.empty()) extra = json_.value();
        } else if (ap->is_boolean()) {
            if (ap->get<bool>()) extra = json_.value();
        } else {
            extra = visit(*ap, path + "/additionalProperties", depth + 1);
        }
        const int ws = json_.ws();
        const int colon = g_.sequence({ws, g_.literal(":"), ws});
        const int comma = g_.sequence({ws, g_.literal(","), ws});
        auto member = [&](const std::string& name, int value) { return g_.sequence({literal_value(ojson(name)), colon, value}); };
        // first(i): properties i.. with none written yet; rest(i): with one written (a comma first).
        const size_t n = list.size();
        const int extras_rest = extra >= 0 ? g_.star(g_.sequence({comma, g_.sequence({json_.string(), colon, extra})})) : g_.empty();
        const int extras_first =
            extra >= 0 ? g_.optional(g_.sequence({g_.sequence({json_.string(), colon, extra}), extras_rest})) : g_.empty();
        std::vector<int> rest(n + 1), first(n + 1);
        rest[n] = extras_rest;
        first[n] = extras_first;
        for (size_t i = n; i-- > 0;) {
            const int m = member(list[i].name, list[i].value);
            const int with = g_.sequence({comma, m, rest[i + 1]});
            rest[i] = list[i].required ? with : g_.choice({with, rest[i + 1]});
            const int take = g_.sequence({m, rest[i + 1]});
            first[i] = list[i].required ? take : g_.choice({take, first[i + 1]});
        }
        return g_.sequence({g_.literal("{"), ws, first[0], ws, g_.literal("}")});
    }

    int array(const ojson& s, const std::string& path, int depth) {
        const int64_t min = count(s, "minItems", path, 0), max = count(s, "maxItems", path, -1);
        if (max >= 0 && min > max) fail(path, "minItems " + std::to_string(min) + " is above maxItems " + std::to_string(max));
        std::vector<int> prefix;
        if (auto p = s.find("prefixItems"); p != s.end()) {
            if (!p->is_array()) fail(path + "/prefixItems", "'prefixItems' must be an array");
            for (size_t i = 0; i < p->size(); ++i) prefix.push_back(visit((*p)[i], path + "/prefixItems/" + std::to_string(i), depth + 1));
        }
        int item = json_.value();
        bool more = true;
        if (auto it = s.find("items"); it != s.end()) {
            if (it->is_boolean() && !it->get<bool>())
                more = false;
            else
                item = visit(*it, path + "/items", depth + 1);
        }
        const int ws = json_.ws();
        const int comma = g_.sequence({ws, g_.literal(","), ws});
        if (prefix.empty()) {
            if (!more && min > 0) fail(path, "minItems " + std::to_string(min) + " but 'items' is false");
            if (!more) return g_.sequence({g_.literal("["), ws, g_.literal("]")});
            return json_.list("[", item, static_cast<int>(min), max < 0 ? kUnbounded : static_cast<int>(max), "]");
        }
        // A tuple: the prefix items in order (as many as minItems asks, then optionally more), then
        // the rest from `items`.
        const auto np = static_cast<int64_t>(prefix.size());
        if (!more && min > np) fail(path, "minItems " + std::to_string(min) + " is above the " + std::to_string(np) + " prefixItems");
        const int64_t cap = max < 0 ? -1 : max;
        // tail(k): items from position k on, at least one already written
        std::vector<int> tail(static_cast<size_t>(np) + 1);
        {
            const int64_t lo = std::max<int64_t>(min - np, 0);
            const int64_t hi = !more ? 0 : cap < 0 ? -1 : std::max<int64_t>(cap - np, 0);
            tail[static_cast<size_t>(np)] =
                hi == 0 ? g_.empty()
                        : g_.repeat(g_.sequence({comma, item}), static_cast<int>(lo), hi < 0 ? kUnbounded : static_cast<int>(hi));
        }
        for (int64_t k = np - 1; k >= 1; --k) {
            const int with = g_.sequence({comma, prefix[static_cast<size_t>(k)], tail[static_cast<size_t>(k) + 1]});
            const bool must = k < min && (cap < 0 || k < cap);
            tail[static_cast<size_t>(k)] = must ? with : (cap >= 0 && k >= cap) ? g_.empty() : g_.optional(with);
        }
        int body = g_.sequence({prefix[0], np > 1 ? tail[1] : tail[static_cast<size_t>(np)], ws});
        if (min == 0) body = g_.optional(body);
        if (cap == 0) body = g_.empty();
        return g_.sequence({g_.literal("["), ws, body, g_.literal("]")});
    }

    int string(const ojson& s, const std::string& path) {
        if (auto p = s.find("pattern"); p != s.end()) {
            if (!p->is_string()) fail(path + "/pattern", "'pattern' must be a string");
            try {
                return json_string_from_pattern(g_, p->get<std::string>());
            } catch (const GrammarError& e) {
                fail(path + "/pattern", std::string("the pattern does not compile: ") + e.what() + " (" + e.where + ")");
            }
        }
        if (auto f = s.find("format"); f != s.end() && f->is_string()) {
            const int e = json_string_from_format(g_, f->get<std::string>());
            if (e >= 0) return e;  // an unknown format is an annotation: any string
        }
        const int64_t min = count(s, "minLength", path, 0), max = count(s, "maxLength", path, -1);
        if (max >= 0 && min > max) fail(path, "minLength " + std::to_string(min) + " is above maxLength " + std::to_string(max));
        if (min == 0 && max < 0) return json_.string();
        return g_.sequence({g_.literal("\""),
                            g_.repeat(json_.string_char(), static_cast<int>(min), max < 0 ? kUnbounded : static_cast<int>(max)),
                            g_.literal("\"")});
    }

    // A bound as an integer: exclusive bounds move in by one; fractions round inwards.
    std::optional<int64_t> int_bound(const ojson& s, const char* inclusive, const char* exclusive, bool lower, const std::string& path) {
        std::optional<double> v;
        auto read = [&](const char* key, double shift) {
            auto it = s.find(key);
            if (it == s.end()) return;
            if (it->is_boolean()) return;  // draft-04's boolean exclusive flags: handled with the bound below
            if (!it->is_number()) fail(path + "/" + key, std::string("'") + key + "' must be a number");
            double x = it->get<double>();
            if (key == exclusive)
                x = lower ? std::floor(x) + 1 : std::ceil(x) - 1;
            else
                x = lower ? std::ceil(x) : std::floor(x);
            x += shift;
            if (!v || (lower ? x > *v : x < *v)) v = x;
        };
        read(inclusive, 0);
        read(exclusive, 0);
        if (auto it = s.find(exclusive); it != s.end() && it->is_boolean() && it->get<bool>() && v) *v += lower ? 1 : -1;
        if (!v) return std::nullopt;
        if (std::abs(*v) > 1e15) return std::nullopt;  // past what integer() writes anyway
        return static_cast<int64_t>(*v);
    }

    int integer(const ojson& s, const std::string& path) {
        const auto lo = int_bound(s, "minimum", "exclusiveMinimum", true, path);
        const auto hi = int_bound(s, "maximum", "exclusiveMaximum", false, path);
        if (lo && hi && *lo > *hi) fail(path, "no integer lies between the minimum and the maximum");
        if (!lo && !hi) return json_.integer();
        return integer_range(g_, lo, hi);
    }

    int number(const ojson& s, const std::string& path) {
        // Bounds on numbers: a non-negative minimum drops the sign; other bounds are not supported.
        auto has = [&](const char* k) { return s.contains(k); };
        if (has("maximum") || has("exclusiveMaximum")) fail(path + "/maximum", "bounds above are supported on integers only");
        if (has("exclusiveMinimum")) fail(path + "/exclusiveMinimum", "exclusive bounds are supported on integers only");
        for (const char* k : {"minimum"})
            if (auto it = s.find(k); it != s.end() && it->is_number()) {
                if (it->get<double>() != 0) fail(path + "/" + k, "bounds other than a minimum of 0 are supported on integers only");
                const int digit = g_.chars({{'0', '9'}});
                const int whole =
                    g_.choice({g_.literal("0"), g_.sequence({g_.chars({{'1', '9'}}), g_.repeat(digit, 0, JsonPieces::kMaxDigits - 1)})});
                const int fraction = g_.sequence({g_.literal("."), g_.repeat(digit, 1, JsonPieces::kMaxDigits)});
                return g_.sequence({whole, g_.optional(fraction)});
            }
        return json_.number();
    }

    const ojson& root_;
    Grammar g_;
    JsonPieces json_;
    std::map<std::string, int> refs_;
};

}  // namespace

Grammar json_schema_grammar(const nlohmann::ordered_json& schema) { return SchemaConverter(schema).run(); }

Grammar json_object_grammar() {
    Grammar g;
    JsonPieces json(g);
    const int obj = json.object();
    g.root = g.rule("root");
    g.define(g.root, obj);
    return g;
}

}  // namespace radiance::grammar
