// structured_output.h: the wire fields that constrain a generation's text (OpenAI's
// response_format, vLLM's structured_outputs and its older guided_* fields, llama-server's
// json_schema and grammar), compiled once per distinct constraint (GrammarCache) for the model's
// vocabulary, and the per-choice TokenConstraint the scheduler drives.
#pragma once
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "generation.h"
#include "json_io.h"
#include "radiance/grammar/matcher.h"

namespace radiance::frontend {

class ApiState;

// Compiled grammars by source, most recently used kept (a compile costs milliseconds, and agents
// send the same schema request after request); the vocabulary's trie is built on first use.
class GrammarCache {
public:
    static constexpr size_t kEntries = 64;
    // kind: "json_schema", "regex", ...; source: its text. Throws grammar::GrammarError.
    std::shared_ptr<const grammar::CompiledGrammar> get(const ApiState& api, const std::string& kind, const std::string& source);
    // A grammar built by the caller (tool calls), cached under `key`; build() runs only on a miss.
    std::shared_ptr<const grammar::CompiledGrammar> get_built(const ApiState& api, const std::string& key,
                                                              const std::function<grammar::Grammar()>& build);

private:
    std::shared_ptr<const grammar::Vocabulary> vocabulary(const ApiState& api);
    std::mutex mu_;
    std::shared_ptr<const grammar::Vocabulary> vocab_;
    std::list<std::string> lru_;
    std::unordered_map<std::string, std::pair<std::shared_ptr<const grammar::CompiledGrammar>, std::list<std::string>::iterator>> map_;
};

// The constraint an OpenAI-shaped request asks for (response_format, structured_outputs,
// guided_json / guided_regex / guided_choice / guided_grammar), or null. 400 naming the field and
// the place in it for one that does not compile or that nothing satisfies, or for two at once.
std::shared_ptr<const grammar::CompiledGrammar> read_openai_constraint(const ordered_json& body, const ApiState& api);
// llama-server's /completion: json_schema (an object) or grammar (GBNF), or null.
std::shared_ptr<const grammar::CompiledGrammar> read_llama_constraint(const ordered_json& body, const ApiState& api);

// A choice's constraint: a fresh matcher over the grammar; the stop tokens are allowed where the
// grammar may end.
std::shared_ptr<TokenConstraint> make_constraint(std::shared_ptr<const grammar::CompiledGrammar> g, std::vector<int32_t> stop_token_ids);

}  // namespace radiance::frontend
