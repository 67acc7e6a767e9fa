#include "sampling_fields.h"

#include <cmath>
#include <limits>

#include "api_error.h"

namespace radiance::frontend {

namespace {

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

void read_penalties(const ordered_json& body, SamplingParams& s, const char* repetition_name) {
    if (auto v = get_number(body, "presence_penalty", -2, 2)) s.presence_penalty = *v;
    if (auto v = get_number(body, "frequency_penalty", -2, 2)) s.frequency_penalty = *v;
    if (auto v = get_number(body, repetition_name, 0, 100)) {
        if (*v <= 0) throw bad_request(std::string("'") + repetition_name + "' must be greater than 0", repetition_name);
        s.repetition_penalty = *v;
    }
}

int32_t bias_token(const std::string& key, const ApiState& api, const std::string& param) {
    size_t used = 0;
    long long id = -1;
    try {
        id = std::stoll(key, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != key.size()) throw bad_request("'" + param + "' keys must be token ids, not '" + key + "'", param);
    const int64_t vocab = api.vocab_size();
    if (id < 0 || (vocab > 0 && id >= vocab))
        throw bad_request("'" + param + "' names token " + key + ", outside the vocabulary [0, " + std::to_string(vocab) + ")", param);
    return static_cast<int32_t>(id);
}

float bias_value(const ordered_json& v, const std::string& param) {
    if (!v.is_number()) throw bad_request("'" + param + "' values must be numbers, not " + json_type_name(v), param);
    const double b = v.get<double>();
    if (!(b >= -100 && b <= 100)) throw bad_request("'" + param + "' values must be between -100 and 100", param);
    return static_cast<float>(b);
}

// OpenAI's {"token id": bias}.
static_assert(kMaxObjectKeys >= kMaxLogitBias, "an object-form logit_bias at the cap must get past parse_body");

void check_bias_count(size_t n, const std::string& param) {
    if (n > kMaxLogitBias)
        throw bad_request("'" + param + "' has " + std::to_string(n) + " entries; at most " + std::to_string(kMaxLogitBias), param);
}

void read_bias_object(const ordered_json& obj, const ApiState& api, SamplingParams& s, const std::string& param) {
    check_bias_count(obj.size(), param);
    for (auto it = obj.begin(); it != obj.end(); ++it)
        s.logit_bias.emplace_back(bias_token(it.key(), api, param), bias_value(it.value(), param));
}

// llama-server's [[id, bias], ...]; a bias of false bans the token.
void read_bias_pairs(const ordered_json& arr, const ApiState& api, SamplingParams& s, const std::string& param) {
    check_bias_count(arr.size(), param);
    for (const auto& pair : arr) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer())
            throw bad_request("'" + param + "' entries must be [token id, bias] pairs", param);
        const int32_t id = bias_token(std::to_string(pair[0].get<int64_t>()), api, param);
        const float bias =
            pair[1].is_boolean() && !pair[1].get<bool>() ? -std::numeric_limits<float>::infinity() : bias_value(pair[1], param);
        s.logit_bias.emplace_back(id, bias);
    }
}

}  // namespace

SamplingParams read_openai_sampling(const ordered_json& body, const ApiState& api) {
    SamplingParams s;
    if (auto v = get_number(body, "temperature", 0, 2)) s.temperature = *v;
    if (auto v = get_number(body, "top_p", 0, 1)) s.top_p = *v;
    if (auto v = get_int(body, "top_k", -1, kIntMax)) s.top_k = static_cast<int>(std::max<int64_t>(*v, 0));
    if (auto v = get_number(body, "min_p", 0, 1)) s.min_p = *v;
    s.seed = get_seed(body, "seed");
    read_penalties(body, s, "repetition_penalty");
    auto bias = body.find("logit_bias");
    if (bias != body.end() && !bias->is_null()) {
        if (!bias->is_object()) throw bad_request("'logit_bias' must be an object of token id -> bias", "logit_bias");
        read_bias_object(*bias, api, s, "logit_bias");
    }
    return s;
}

SamplingParams read_anthropic_sampling(const ordered_json& body) {
    SamplingParams s;
    if (auto v = get_number(body, "temperature", 0, 1)) s.temperature = *v;
    if (auto v = get_number(body, "top_p", 0, 1)) s.top_p = *v;
    if (auto v = get_int(body, "top_k", 0, kIntMax)) s.top_k = static_cast<int>(*v);
    return s;
}

SamplingParams read_llama_sampling(const ordered_json& body, const ApiState& api) {
    SamplingParams s;
    if (auto v = get_number(body, "temperature", -1e9, 1e9)) s.temperature = std::max(*v, 0.0);  // llama: <= 0 greedy
    if (auto v = get_int(body, "top_k", INT32_MIN, kIntMax)) s.top_k = static_cast<int>(std::max<int64_t>(*v, 0));
    if (auto v = get_number(body, "top_p", 0, 1)) s.top_p = *v;
    if (auto v = get_number(body, "min_p", 0, 1)) s.min_p = *v;
    if (auto seed = body.find("seed"); seed != body.end() && !(seed->is_number_integer() && seed->get<int64_t>() == -1))
        s.seed = get_seed(body, "seed");
    read_penalties(body, s, "repeat_penalty");
    auto bias = body.find("logit_bias");
    if (bias != body.end() && !bias->is_null()) {
        if (bias->is_array())
            read_bias_pairs(*bias, api, s, "logit_bias");
        else if (bias->is_object())
            read_bias_object(*bias, api, s, "logit_bias");
        else
            throw bad_request("'logit_bias' must be [[id, bias], ...] or {\"id\": bias}", "logit_bias");
    }
    if (auto n = get_int(body, "n_probs", 0, api.ctx().options.max_top_logprobs); n && *n > 0) s.top_logprobs = static_cast<int>(*n);
    return s;
}

std::optional<uint64_t> seed_for_choice(std::optional<uint64_t> seed, size_t choice) {
    if (!seed || choice == 0) return seed;
    // SplitMix64's finaliser: nearby seeds and choices give unrelated streams.
    uint64_t z = *seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(choice);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace radiance::frontend
