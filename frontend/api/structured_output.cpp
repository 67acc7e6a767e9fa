#include "structured_output.h"

#include <algorithm>
#include <vector>

#include "api_error.h"
#include "api_state.h"
#include "radiance/grammar/sources.h"

namespace radiance::frontend {

namespace {

class GrammarConstraint : public TokenConstraint {
public:
    GrammarConstraint(std::shared_ptr<const grammar::CompiledGrammar> g, std::vector<int32_t> stops)
        : words_(g->vocabulary().words()), matcher_(std::move(g)), stops_(std::move(stops)) {}
    // The matcher throws only for a grammar too ambiguous to follow: the request ends in error.
    bool allowed(std::span<uint32_t> words) override {
        try {
            return fill(words);
        } catch (const std::exception&) {
            return false;
        }
    }
    bool accept(int32_t token) override {
        try {
            return matcher_.accept_token(token);
        } catch (const std::exception&) {
            return false;
        }
    }
    bool complete() const override { return matcher_.finished(); }

private:
    bool fill(std::span<uint32_t> words) {
        if (words.size() < words_) return false;
        std::fill(words.begin() + static_cast<std::ptrdiff_t>(words_), words.end(), 0u);
        matcher_.fill_mask(words.first(words_));
        if (matcher_.can_end())
            for (int32_t t : stops_)
                if (t >= 0 && static_cast<size_t>(t) < words.size() * 32) words[static_cast<size_t>(t) >> 5] |= 1u << (t & 31);
        for (uint32_t w : words)
            if (w) return true;
        return false;
    }

    size_t words_;
    grammar::Matcher matcher_;
    std::vector<int32_t> stops_;
};

// A schema given as an object, or as a JSON string holding one (vLLM takes both).
ordered_json schema_of(const ordered_json& v, const std::string& param) {
    if (v.is_object() || v.is_boolean()) return v;
    if (v.is_string()) {
        auto parsed = ordered_json::parse(v.get<std::string>(), nullptr, false);
        if (parsed.is_discarded()) throw bad_request("'" + param + "' is a string that is not JSON", param);
        return parsed;
    }
    throw bad_request("'" + param + "' must be a JSON Schema object", param);
}

std::string string_field(const ordered_json& v, const std::string& param) {
    if (!v.is_string() || v.get<std::string>().empty()) throw bad_request("'" + param + "' must be a non-empty string", param);
    return v.get<std::string>();
}

// One requested constraint: which kind, its source text, and the field it came from.
struct Ask {
    std::string kind, source, param;
};

std::shared_ptr<const grammar::CompiledGrammar> compile(const ApiState& api, const Ask& a) {
    try {
        return api.grammars().get(api, a.kind, a.source);
    } catch (const grammar::GrammarError& e) {
        const std::string at = e.where.empty() ? "" : " at " + e.where;
        throw bad_request("'" + a.param + "' cannot be used for structured output" + at + ": " + e.what(), a.param);
    }
}

void add(std::vector<Ask>& asks, Ask a) {
    if (!asks.empty())
        throw bad_request("only one output constraint may be given; got '" + asks[0].param + "' and '" + a.param + "'", a.param);
    asks.push_back(std::move(a));
}

std::string dump(const ordered_json& j) { return j.dump(); }

void read_response_format(const ordered_json& body, std::vector<Ask>& asks) {
    auto rf = body.find("response_format");
    if (rf == body.end() || rf->is_null()) return;
    if (!rf->is_object()) throw bad_request("'response_format' must be an object", "response_format");
    const std::string type = rf->value("type", std::string());
    if (type == "text") return;
    if (type == "json_object") return add(asks, {"json_object", "", "response_format"});
    if (type == "json_schema") {
        auto js = rf->find("json_schema");
        if (js == rf->end() || !js->is_object())
            throw bad_request("'response_format.json_schema' must be an object with a 'schema'", "response_format.json_schema");
        auto schema = js->find("schema");
        if (schema == js->end() || schema->is_null())
            throw bad_request("'response_format.json_schema.schema' is required", "response_format.json_schema.schema");
        if (auto strict = js->find("strict"); strict != js->end() && !strict->is_null() && !strict->is_boolean())
            throw bad_request("'response_format.json_schema.strict' must be a boolean", "response_format.json_schema.strict");
        return add(asks,
                   {"json_schema", dump(schema_of(*schema, "response_format.json_schema.schema")), "response_format.json_schema.schema"});
    }
    throw bad_request("'response_format.type' must be 'text', 'json_object' or 'json_schema'", "response_format.type");
}

// vLLM's fields: structured_outputs {json, regex, choice, grammar, json_object}, and the older
// top-level guided_json / guided_regex / guided_choice / guided_grammar.
void read_vllm(const ordered_json& obj, const std::string& prefix, const char* json_key, const char* regex_key, const char* choice_key,
               const char* grammar_key, std::vector<Ask>& asks) {
    if (auto v = obj.find(json_key); v != obj.end() && !v->is_null())
        add(asks, {"json_schema", dump(schema_of(*v, prefix + json_key)), prefix + json_key});
    if (auto v = obj.find(regex_key); v != obj.end() && !v->is_null())
        add(asks, {"regex", string_field(*v, prefix + regex_key), prefix + regex_key});
    if (auto v = obj.find(choice_key); v != obj.end() && !v->is_null()) {
        const std::string param = prefix + choice_key;
        if (!v->is_array() || v->empty()) throw bad_request("'" + param + "' must be a non-empty array of strings", param);
        ordered_json list = ordered_json::array();
        for (const auto& c : *v) {
            if (!c.is_string()) throw bad_request("'" + param + "' must be a non-empty array of strings", param);
            list.push_back(c);
        }
        add(asks, {"choice", dump(list), param});
    }
    if (auto v = obj.find(grammar_key); v != obj.end() && !v->is_null())
        add(asks, {"gbnf", string_field(*v, prefix + grammar_key), prefix + grammar_key});
}

}  // namespace

std::shared_ptr<const grammar::Vocabulary> GrammarCache::vocabulary(const ApiState& api) {
    if (!vocab_) vocab_ = grammar::Vocabulary::from_tokenizer(api.tokenizer(), api.vocab_size());
    return vocab_;
}

std::shared_ptr<const grammar::CompiledGrammar> GrammarCache::get(const ApiState& api, const std::string& kind, const std::string& source) {
    return get_built(api, kind + '\n' + source, [&] {
        if (kind == "json_schema") return grammar::json_schema_grammar(ordered_json::parse(source));
        if (kind == "json_object") return grammar::json_object_grammar();
        if (kind == "regex") return grammar::regex_grammar(source);
        if (kind == "choice") return grammar::choice_grammar(ordered_json::parse(source).get<std::vector<std::string>>());
        return grammar::gbnf_grammar(source);
    });
}

std::shared_ptr<const grammar::CompiledGrammar> GrammarCache::get_built(const ApiState& api, const std::string& key,
                                                                        const std::function<grammar::Grammar()>& build) {
    std::shared_ptr<const grammar::Vocabulary> vocab;
    {
        std::lock_guard lk(mu_);
        auto it = map_.find(key);
        if (it != map_.end()) {
            lru_.splice(lru_.begin(), lru_, it->second.second);
            return it->second.first;
        }
        vocab = vocabulary(api);
    }
    auto compiled = grammar::CompiledGrammar::compile(build(), vocab);  // outside the lock: milliseconds
    std::lock_guard lk(mu_);
    if (map_.count(key)) return map_[key].first;
    if (map_.size() >= kEntries) {
        map_.erase(lru_.back());
        lru_.pop_back();
    }
    lru_.push_front(key);
    map_[key] = {compiled, lru_.begin()};
    return compiled;
}

std::shared_ptr<const grammar::CompiledGrammar> read_openai_constraint(const ordered_json& body, const ApiState& api) {
    std::vector<Ask> asks;
    read_response_format(body, asks);
    if (auto so = body.find("structured_outputs"); so != body.end() && !so->is_null()) {
        if (!so->is_object()) throw bad_request("'structured_outputs' must be an object", "structured_outputs");
        read_vllm(*so, "structured_outputs.", "json", "regex", "choice", "grammar", asks);
        if (auto jo = so->find("json_object"); jo != so->end() && jo->is_boolean() && jo->get<bool>())
            add(asks, {"json_object", "", "structured_outputs.json_object"});
    }
    read_vllm(body, "", "guided_json", "guided_regex", "guided_choice", "guided_grammar", asks);
    if (asks.empty()) return nullptr;
    return compile(api, asks[0]);
}

std::shared_ptr<const grammar::CompiledGrammar> read_llama_constraint(const ordered_json& body, const ApiState& api) {
    std::vector<Ask> asks;
    if (auto v = body.find("json_schema"); v != body.end() && !v->is_null())
        add(asks, {"json_schema", dump(schema_of(*v, "json_schema")), "json_schema"});
    if (auto v = body.find("grammar"); v != body.end() && !v->is_null() && !(v->is_string() && v->get<std::string>().empty()))
        add(asks, {"gbnf", string_field(*v, "grammar"), "grammar"});
    if (asks.empty()) return nullptr;
    return compile(api, asks[0]);
}

std::shared_ptr<TokenConstraint> make_constraint(std::shared_ptr<const grammar::CompiledGrammar> g, std::vector<int32_t> stop_token_ids) {
    return std::make_shared<GrammarConstraint>(std::move(g), std::move(stop_token_ids));
}

}  // namespace radiance::frontend
