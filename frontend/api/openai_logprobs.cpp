#include "openai_logprobs.h"

namespace radiance::frontend {

namespace {

ordered_json bytes_of(const std::string& s) {
    ordered_json b = ordered_json::array();
    for (unsigned char c : s) b.push_back(static_cast<int>(c));
    return b;
}

ordered_json entry(const TokenPiece& piece, int32_t id, float logprob, bool with_id) {
    ordered_json e;
    if (with_id) e["id"] = id;
    e["token"] = piece.text;
    e["logprob"] = logprob;
    e["bytes"] = bytes_of(piece.bytes);
    return e;
}

}  // namespace

size_t code_points(std::string_view utf8) {
    size_t n = 0;
    for (unsigned char c : utf8) n += (c & 0xC0) != 0x80;  // count every byte that starts a character
    return n;
}

ordered_json chat_logprobs(const std::vector<ShownToken>& tokens) {
    ordered_json content = ordered_json::array();
    for (const auto& t : tokens) {
        ordered_json e = entry(t.piece, t.event.token, t.event.logprob, false);
        ordered_json top = ordered_json::array();
        for (size_t k = 0; k < t.top.size(); ++k) top.push_back(entry(t.top[k], t.event.top[k].token, t.event.top[k].logprob, false));
        e["top_logprobs"] = std::move(top);
        content.push_back(std::move(e));
    }
    return {{"content", std::move(content)}, {"refusal", nullptr}};
}

ordered_json completion_logprobs(const std::vector<ShownToken>& tokens, size_t& offset) {
    ordered_json texts = ordered_json::array(), lps = ordered_json::array(), tops = ordered_json::array(), offsets = ordered_json::array();
    for (const auto& t : tokens) {
        texts.push_back(t.piece.text);
        lps.push_back(t.event.logprob);
        ordered_json top = ordered_json::object();
        for (size_t k = 0; k < t.top.size(); ++k) top[t.top[k].text] = t.event.top[k].logprob;
        tops.push_back(std::move(top));
        offsets.push_back(offset);
        offset += code_points(t.piece.text);
    }
    return {{"tokens", std::move(texts)},
            {"token_logprobs", std::move(lps)},
            {"top_logprobs", std::move(tops)},
            {"text_offset", std::move(offsets)}};
}

ordered_json llama_probabilities(const std::vector<ShownToken>& tokens) {
    ordered_json out = ordered_json::array();
    for (const auto& t : tokens) {
        ordered_json e = entry(t.piece, t.event.token, t.event.logprob, true);
        ordered_json top = ordered_json::array();
        for (size_t k = 0; k < t.top.size(); ++k) top.push_back(entry(t.top[k], t.event.top[k].token, t.event.top[k].logprob, true));
        e["top_logprobs"] = std::move(top);
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace radiance::frontend
