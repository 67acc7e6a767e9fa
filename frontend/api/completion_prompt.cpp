#include "completion_prompt.h"

#include "api_error.h"

namespace radiance::frontend {

namespace {

bool is_id_array(const ordered_json& v) {
    if (!v.is_array() || v.empty()) return false;
    for (const auto& x : v)
        if (!x.is_number_integer()) return false;
    return true;
}

std::vector<int32_t> to_ids(const ApiState& api, const ordered_json& v, const std::string& param) {
    std::vector<int32_t> ids;
    for (const auto& x : v) {
        const int64_t id = x.get<int64_t>();
        if (id < 0 || id > INT32_MAX) throw bad_request("token id " + x.dump() + " is outside the vocabulary", param);
        ids.push_back(static_cast<int32_t>(id));
    }
    api.check_token_ids(ids, param);
    return ids;
}

PromptInput one_prompt(const ApiState& api, const ordered_json& v, const std::string& param) {
    PromptInput p;
    if (v.is_string()) {
        p.text = v.get<std::string>();
        p.ids = api.tokenizer().encode(p.text, /*add_special_tokens=*/true);
    } else if (is_id_array(v)) {
        p.ids = to_ids(api, v, param);
        p.text = api.tokenizer().decode(p.ids);
    } else {
        throw bad_request("'" + param + "' must be a string, an array of token ids, or an array of those", param);
    }
    if (p.ids.empty()) throw bad_request("'" + param + "' is empty", param);
    return p;
}

}  // namespace

std::vector<PromptInput> read_completion_prompts(const ApiState& api, const ordered_json& body) {
    auto it = body.find("prompt");
    if (it == body.end() || it->is_null()) throw bad_request("'prompt' is required", "prompt");
    std::vector<PromptInput> out;
    if (it->is_array() && !it->empty() && !is_id_array(*it)) {  // a batch
        const auto max = static_cast<size_t>(api.ctx().options.max_n);
        if (it->size() > max)
            throw bad_request("'prompt' has " + std::to_string(it->size()) + " prompts; at most " + std::to_string(max) + " are allowed",
                              "prompt");
        for (size_t i = 0; i < it->size(); ++i) out.push_back(one_prompt(api, (*it)[i], "prompt"));
    } else {
        out.push_back(one_prompt(api, *it, "prompt"));
    }
    return out;
}

PromptInput read_llama_prompt(const ApiState& api, const ordered_json& body) {
    auto it = body.find("prompt");
    if (it == body.end() || it->is_null()) throw bad_request("'prompt' is required", "prompt");
    if (it->is_string() || is_id_array(*it)) return one_prompt(api, *it, "prompt");
    if (!it->is_array()) throw bad_request("'prompt' must be a string or an array of token ids and strings", "prompt");
    PromptInput p;
    const auto& tok = api.tokenizer();
    if (auto bos = tok.bos_id(); bos && !tok.encode("", true).empty()) p.ids.push_back(*bos);
    for (const auto& piece : *it) {
        if (piece.is_string()) {
            auto ids = tok.encode(piece.get_ref<const std::string&>(), /*add_special_tokens=*/false);
            p.ids.insert(p.ids.end(), ids.begin(), ids.end());
        } else if (piece.is_number_integer()) {
            auto ids = to_ids(api, ordered_json::array({piece}), "prompt");
            p.ids.push_back(ids[0]);
        } else {
            throw bad_request("'prompt' entries must be token ids or strings", "prompt");
        }
    }
    if (p.ids.empty()) throw bad_request("'prompt' is empty", "prompt");
    p.text = tok.decode(p.ids);
    return p;
}

}  // namespace radiance::frontend
