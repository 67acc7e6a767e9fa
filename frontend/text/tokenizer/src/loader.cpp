// loader.cpp: building a Tokenizer from tokenizer.json (+ tokenizer_config.json) or from
// GPT-2's encoder.json + vocab.bpe.
#include <fstream>
#include <optional>
#include <unordered_map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "json_util.h"
#include "radiance/text/tokenizer.h"
#include "tokenizer_impl.h"
#include "tokenizer_json_reader.h"

namespace radiance::text {
namespace {

using json_util::json;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw TokenizerError("cannot open " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw TokenizerError("cannot read " + path);
    return ss.str();
}

json parse_json(std::string_view text, const std::string& what) {
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        throw TokenizerError(what + " is not valid JSON: " + e.what());
    }
}

std::vector<AddedToken> parse_added_tokens(const json& j) {
    std::vector<AddedToken> out;
    if (j.is_null()) return out;
    for (const auto& t : j) {
        AddedToken a;
        a.id = json_util::get_id(json_util::require(t, "id", "added token"), "an added token's \"id\"");
        a.content = json_util::require(t, "content", "added token").get<std::string>();
        a.single_word = json_util::get_bool(t, "single_word", false);
        a.lstrip = json_util::get_bool(t, "lstrip", false);
        a.rstrip = json_util::get_bool(t, "rstrip", false);
        a.special = json_util::get_bool(t, "special", false);
        a.normalized = json_util::get_bool(t, "normalized", !a.special);
        out.push_back(std::move(a));
    }
    return out;
}

// bos_token/eos_token are a string, {"content": ...} (an AddedToken) or null.
std::optional<std::string> config_token(const json& config, const char* key) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return std::nullopt;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object() && it->contains("content")) return (*it)["content"].get<std::string>();
    return std::nullopt;
}

void apply_config(detail::TokenizerImpl& impl, const json& config, const LoadOptions& options) {
    impl.bos_token = config_token(config, "bos_token");
    impl.eos_token = config_token(config, "eos_token");
    if (impl.bos_token) impl.bos_id = impl.token_to_id(*impl.bos_token);
    if (impl.eos_token) impl.eos_id = impl.token_to_id(*impl.eos_token);
    if (!options.apply_config_bos_eos || (!config.contains("add_bos_token") && !config.contains("add_eos_token"))) return;
    bool add_bos = json_util::get_bool(config, "add_bos_token", false);
    bool add_eos = json_util::get_bool(config, "add_eos_token", false);
    if (add_bos && !impl.bos_id) throw TokenizerError("tokenizer_config.json sets add_bos_token but has no usable bos_token");
    if (add_eos && !impl.eos_id) throw TokenizerError("tokenizer_config.json sets add_eos_token but has no usable eos_token");
    impl.post_processor = make_bos_eos_template(add_bos ? *impl.bos_id : -1, add_eos ? *impl.eos_id : -1);
}

// The regex of a pre-tokenizer that only splits (Isolated) and then maps bytes, if it is one.
std::optional<std::string> byte_level_split_pattern(const json& pre) {
    auto is_plain_byte_level = [](const json& j, bool use_regex) {
        return j.is_object() && j.value("type", "") == "ByteLevel" && !json_util::get_bool(j, "add_prefix_space", true) &&
               json_util::get_bool(j, "use_regex", true) == use_regex;
    };
    if (is_plain_byte_level(pre, true)) return std::string(kGpt2Pattern);
    if (!pre.is_object() || pre.value("type", "") != "Sequence") return std::nullopt;
    const json& items = pre.contains("pretokenizers") ? pre["pretokenizers"] : json();
    if (!items.is_array() || items.size() != 2 || !is_plain_byte_level(items[1], false)) return std::nullopt;
    const json& split = items[0];
    if (!split.is_object() || split.value("type", "") != "Split" || split.value("behavior", "") != "Isolated" ||
        json_util::get_bool(split, "invert", false) || !split.contains("pattern") || !split["pattern"].contains("Regex"))
        return std::nullopt;
    return split["pattern"]["Regex"].get<std::string>();
}

bool same_token(const AddedToken& a, const AddedToken& b) {
    return a.content == b.content && a.single_word == b.single_word && a.lstrip == b.lstrip && a.rstrip == b.rstrip &&
           a.normalized == b.normalized && a.special == b.special;
}

// The library does not trust the ids written in "added_tokens": a token whose content is in
// the model's vocabulary takes that id, the others are numbered from the vocabulary size on,
// in file order. Real files agree with this; hand-edited ones may not, and then the
// library's ids are the ones the model was used with.
std::vector<AddedToken> assign_added_token_ids(std::vector<AddedToken> tokens, const BpeModel& model) {
    std::vector<AddedToken> out;
    std::unordered_map<std::string, int32_t> id_of_content;
    std::unordered_map<int32_t, size_t> index_of_id;
    auto next_id = static_cast<int32_t>(model.vocab_count());
    for (AddedToken& t : tokens) {
        if (t.content.empty()) continue;
        auto known = id_of_content.find(t.content);
        if (known != id_of_content.end() && same_token(out[index_of_id[known->second]], t)) continue;
        int32_t model_id = model.token_to_id(t.content);
        t.id = known != id_of_content.end() ? known->second : model_id >= 0 ? model_id : next_id++;
        id_of_content[t.content] = t.id;
        if (auto at = index_of_id.find(t.id); at != index_of_id.end()) {
            out[at->second] = std::move(t);  // the later token replaces the one with its id
        } else {
            index_of_id[t.id] = out.size();
            out.push_back(std::move(t));
        }
    }
    return out;
}

void attach_added_tokens(detail::TokenizerImpl& impl, std::vector<AddedToken> tokens) {
    tokens = assign_added_token_ids(std::move(tokens), *impl.model);
    const Normalizer* normalizer = impl.normalizer.get();
    impl.added = std::make_unique<AddedVocabulary>(std::move(tokens), [normalizer](const std::string& content) {
        std::string s = content;
        if (normalizer) normalizer->normalize(s);
        return s;
    });
    impl.finish();
}

// The tokenizer.json (and tokenizer_config.json) bytes as a tokenizer's parts.
std::shared_ptr<detail::TokenizerImpl> build_impl(std::string_view tokenizer_json, std::string_view config_json, const LoadOptions& options) {
    TokenizerJson parts = read_tokenizer_json(tokenizer_json);
    const json& j = parts.document;
    if (!j.is_object()) throw TokenizerError("tokenizer.json is not a JSON object");
    auto impl = std::make_shared<detail::TokenizerImpl>();
    auto field = [&j](const char* key) -> const json& {
        static const json kNull;
        auto it = j.find(key);
        return it == j.end() ? kNull : *it;
    };
    impl->normalizer = parse_normalizer(field("normalizer"));
    impl->pre_tokenizer = parse_pre_tokenizer(field("pre_tokenizer"));
    const json& model = json_util::require(j, "model", "tokenizer.json");
    impl->model =
        std::make_unique<BpeModel>(parts.has_vocab ? build_bpe_model(model, std::move(parts.vocab), parts.merges) : parse_bpe_model(model));
    impl->post_processor = parse_post_processor(field("post_processor"));
    impl->decoder = parse_decoder(field("decoder"), impl->decoder_traits);
    if (options.fast_paths) {
        if (auto pattern = byte_level_split_pattern(field("pre_tokenizer")))
            impl->byte_level_split = std::make_unique<Regex>(*pattern, false);
    }
    attach_added_tokens(*impl, parse_added_tokens(field("added_tokens")));
    if (!config_json.empty()) {
        json config = parse_json(config_json, "tokenizer_config.json");
        if (!config.is_object()) throw TokenizerError("tokenizer_config.json is not a JSON object");
        try {
            apply_config(*impl, config, options);
        } catch (const json::exception& e) {
            throw TokenizerError(std::string("tokenizer_config.json: a value of the wrong kind (") + e.what() + ")");
        } catch (const TokenizerError& e) {
            throw TokenizerError(std::string("tokenizer_config.json: ") + e.what());
        }
    }
    return impl;
}

}  // namespace

// A JSON value of another kind than the format's where one is read (nlohmann's exception) is an
// error naming the file, as every other refusal here is, never an exception of the JSON library's.
Tokenizer Tokenizer::from_json(std::string_view tokenizer_json, std::string_view config_json, const LoadOptions& options) {
    try {
        return Tokenizer(build_impl(tokenizer_json, config_json, options));
    } catch (const json::exception& e) {
        throw TokenizerError(std::string("tokenizer.json: a value of the wrong kind (") + e.what() + ")");
    }
}

Tokenizer Tokenizer::from_file(const std::string& tokenizer_json_path, const std::string& config_json_path, const LoadOptions& options) {
    std::string config = config_json_path.empty() ? std::string() : read_file(config_json_path);
    try {
        return from_json(read_file(tokenizer_json_path), config, options);
    } catch (const TokenizerError& e) {
        throw TokenizerError(tokenizer_json_path + ": " + e.what());
    }
}

Tokenizer Tokenizer::from_gpt2_files(const std::string& encoder_json_path, const std::string& vocab_bpe_path) {
    json encoder = parse_json(read_file(encoder_json_path), encoder_json_path);
    if (!encoder.is_object()) throw TokenizerError(encoder_json_path + ": not a JSON object of token ids");
    std::vector<std::pair<std::string, int32_t>> vocab;
    for (auto it = encoder.begin(); it != encoder.end(); ++it) {
        vocab.emplace_back(it.key(), json_util::get_id(*it, (encoder_json_path + ": \"" + it.key() + "\"'s id").c_str()));
    }

    std::istringstream lines(read_file(vocab_bpe_path));
    std::vector<std::pair<std::string, std::string>> merges;
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line.rfind("#version", 0) == 0) continue;
        size_t space = line.find(' ');
        if (space == std::string::npos) throw TokenizerError(vocab_bpe_path + ": bad merge line \"" + line + "\"");
        merges.emplace_back(line.substr(0, space), line.substr(space + 1));
    }

    auto impl = std::make_shared<detail::TokenizerImpl>();
    const json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    impl->pre_tokenizer = parse_pre_tokenizer(byte_level);
    impl->byte_level_split = std::make_unique<Regex>(kGpt2Pattern, false);
    impl->decoder = parse_decoder(byte_level, impl->decoder_traits);
    impl->model = std::make_unique<BpeModel>(std::move(vocab), merges, BpeModel::Options{});
    std::vector<AddedToken> added;
    const std::string eot = "<|endoftext|>";
    int32_t eot_id = impl->model->token_to_id(eot);
    if (eot_id >= 0) added.push_back({eot_id, eot, false, false, false, false, true});
    attach_added_tokens(*impl, std::move(added));
    if (eot_id >= 0) {
        impl->bos_token = impl->eos_token = eot;
        impl->bos_id = impl->eos_id = eot_id;
    }
    return Tokenizer(std::move(impl));
}

}  // namespace radiance::text
