// tok_check.cpp: golden-file comparison for rad-tokcheck (and the unit tests).
#include "tok_check.h"

#include "radiance/container/container.h"
#include "radiance/util/error.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

namespace radiance::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A short printable excerpt: control and non-ASCII bytes escaped, at most `max` bytes.
std::string excerpt(const std::string& s, size_t from = 0, size_t max = 40) {
    std::string out = from > 0 ? "..." : "";
    size_t end = std::min(s.size(), from + max);
    for (size_t i = from; i < end; ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c == '"' || c == '\\')
            out += std::string("\\") + static_cast<char>(c);
        else if (c < 0x20 || c >= 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\x%02X", c);
            out += buf;
        } else
            out.push_back(static_cast<char>(c));
    }
    if (end < s.size()) out += "...";
    return out;
}

std::string ids_window(const std::vector<text::TokenId>& ids, size_t at) {
    std::ostringstream ss;
    size_t from = at > 3 ? at - 3 : 0, to = std::min(ids.size(), at + 5);
    ss << (from > 0 ? "[... " : "[");
    for (size_t i = from; i < to; ++i) ss << (i > from ? ", " : "") << ids[i];
    ss << (to < ids.size() ? " ...]" : "]") << " (" << ids.size() << " ids)";
    return ss.str();
}

bool check_ids(size_t index, const std::string& text, const char* field, const std::vector<text::TokenId>& want,
               const std::vector<text::TokenId>& got, std::ostream& out) {
    if (want == got) return true;
    size_t at = 0;
    while (at < want.size() && at < got.size() && want[at] == got[at]) ++at;
    out << "case " << index << " \"" << excerpt(text) << "\" " << field << " differ at " << at << ":\n"
        << "  expected " << ids_window(want, at) << "\n"
        << "  got      " << ids_window(got, at) << "\n";
    return false;
}

bool check_text(size_t index, const std::string& text, const char* field, const std::string& want, const std::string& got,
                std::ostream& out) {
    if (want == got) return true;
    size_t at = 0;
    while (at < want.size() && at < got.size() && want[at] == got[at]) ++at;
    size_t from = at > 10 ? at - 10 : 0;
    out << "case " << index << " \"" << excerpt(text) << "\" " << field << " differ at byte " << at << ":\n"
        << "  expected \"" << excerpt(want, from) << "\"\n"
        << "  got      \"" << excerpt(got, from) << "\"\n";
    return false;
}

}  // namespace

text::Tokenizer load_tokenizer_any(const std::string& path) {
    fs::path p(path);
    std::string name = p.filename().string();
    if (ends_with(name, ".rad")) {  // the tokenizer a container carries, as the server loads it
        try {
            auto c = container::Reader::open(path);
            auto tj = c->blob(container::Section::Tokenizer);
            if (!tj) throw text::TokenizerError(path + ": the container carries no tokenizer");
            auto tc = c->blob(container::Section::TokenizerConfig);
            return text::Tokenizer::from_json(*tj, tc ? *tc : std::string());
        } catch (const radiance::Error& e) {
            throw text::TokenizerError(e.what());
        }
    }
    if (name == "encoder.json") {
        fs::path merges = p.parent_path() / "vocab.bpe";
        if (!fs::exists(merges)) throw text::TokenizerError(path + ": GPT-2 encoder.json needs vocab.bpe beside it");
        return text::Tokenizer::from_gpt2_files(path, merges.string());
    }
    if (ends_with(name, ".json")) {
        fs::path config = p.parent_path() / "tokenizer_config.json";
        return text::Tokenizer::from_file(path, fs::exists(config) ? config.string() : std::string());
    }
    throw text::TokenizerError(path + ": not a tokenizer file (want tokenizer.json or GPT-2 encoder.json)");
}

TokCheckResult run_tok_check(const text::Tokenizer& tokenizer, const std::string& golden_path, std::ostream& out) {
    std::ifstream in(golden_path, std::ios::binary);
    if (!in) throw text::TokenizerError("cannot open " + golden_path);
    json golden;
    try {
        golden = json::parse(in);
    } catch (const json::exception& e) {
        throw text::TokenizerError(golden_path + " is not valid JSON: " + e.what());
    }
    if (!golden.contains("cases") || !golden["cases"].is_array()) throw text::TokenizerError(golden_path + " has no \"cases\" array");

    TokCheckResult result;
    const json& cases = golden["cases"];
    for (size_t i = 0; i < cases.size(); ++i) {
        const json& c = cases[i];
        std::string text = c.at("text").get<std::string>();
        auto want_ids = c.at("ids").get<std::vector<text::TokenId>>();
        auto want_special = c.at("ids_with_special").get<std::vector<text::TokenId>>();
        bool ok = check_ids(i, text, "ids", want_ids, tokenizer.encode(text, false), out);
        ok = check_ids(i, text, "ids_with_special", want_special, tokenizer.encode(text, true), out) && ok;
        // "decoded" was made from ids (not ids_with_special): the golden data shows it, e.g. an
        // empty text whose ids_with_special is [<s>] decodes to "".
        ok = check_text(i, text, "decoded", c.at("decoded").get<std::string>(), tokenizer.decode(want_ids, false), out) && ok;
        ok = check_text(i, text, "decoded_skip_special", c.at("decoded_skip_special").get<std::string>(),
                        tokenizer.decode(want_special, true), out) &&
             ok;
        (ok ? result.passed : result.failed)++;
    }
    // Optional: decodes of arbitrary id sequences ({"ids", "text", "text_skip"}), as made by
    // tests/unit/tokenizer/hf_fixtures/make_fixtures.js.
    if (golden.contains("decodes")) {
        const json& decodes = golden["decodes"];
        for (size_t i = 0; i < decodes.size(); ++i) {
            const json& d = decodes[i];
            auto ids = d.at("ids").get<std::vector<text::TokenId>>();
            std::string label = "decode " + std::to_string(i);
            bool ok = check_text(i, label, "text", d.at("text").get<std::string>(), tokenizer.decode(ids, false), out);
            ok = check_text(i, label, "text_skip", d.at("text_skip").get<std::string>(), tokenizer.decode(ids, true), out) && ok;
            (ok ? result.passed : result.failed)++;
        }
    }
    return result;
}

}  // namespace radiance::tools
