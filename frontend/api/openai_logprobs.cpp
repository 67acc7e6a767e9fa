#include "openai_logprobs.h"

#include <array>

namespace radiance::frontend {

namespace {

std::string token_text(const text::Tokenizer& tok, int32_t id) {
    const std::array<int32_t, 1> one{id};
    return tok.decode(one);
}

ordered_json bytes_of(const std::string& s) {
    ordered_json b = ordered_json::array();
    for (unsigned char c : s) b.push_back(static_cast<int>(c));
    return b;
}

ordered_json entry(const text::Tokenizer& tok, int32_t id, float logprob, bool with_id) {
    const std::string t = token_text(tok, id);
    ordered_json e;
    if (with_id) e["id"] = id;
    e["token"] = t;
    e["logprob"] = logprob;
    e["bytes"] = bytes_of(t);
    return e;
}

}  // namespace

ordered_json chat_logprobs(const text::Tokenizer& tok, const std::vector<TokenEvent>& tokens) {
    ordered_json content = ordered_json::array();
    for (const auto& ev : tokens) {
        ordered_json e = entry(tok, ev.token, ev.logprob, false);
        ordered_json top = ordered_json::array();
        for (const auto& alt : ev.top) top.push_back(entry(tok, alt.token, alt.logprob, false));
        e["top_logprobs"] = std::move(top);
        content.push_back(std::move(e));
    }
    return {{"content", std::move(content)}, {"refusal", nullptr}};
}

ordered_json completion_logprobs(const text::Tokenizer& tok, const std::vector<TokenEvent>& tokens, size_t& offset) {
    ordered_json texts = ordered_json::array(), lps = ordered_json::array(), tops = ordered_json::array(),
                 offsets = ordered_json::array();
    for (const auto& ev : tokens) {
        const std::string t = token_text(tok, ev.token);
        texts.push_back(t);
        lps.push_back(ev.logprob);
        ordered_json top = ordered_json::object();
        for (const auto& alt : ev.top) top[token_text(tok, alt.token)] = alt.logprob;
        tops.push_back(std::move(top));
        offsets.push_back(offset);
        offset += t.size();
    }
    return {{"tokens", std::move(texts)}, {"token_logprobs", std::move(lps)}, {"top_logprobs", std::move(tops)},
            {"text_offset", std::move(offsets)}};
}

ordered_json llama_probabilities(const text::Tokenizer& tok, const std::vector<TokenEvent>& tokens) {
    ordered_json out = ordered_json::array();
    for (const auto& ev : tokens) {
        ordered_json e = entry(tok, ev.token, ev.logprob, true);
        ordered_json top = ordered_json::array();
        for (const auto& alt : ev.top) top.push_back(entry(tok, alt.token, alt.logprob, true));
        e["top_logprobs"] = std::move(top);
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace radiance::frontend
