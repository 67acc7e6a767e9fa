// Generated text decoded in the context of the prompt, against Hugging Face `tokenizers`:
// hf_fixtures/incremental.json (make_incremental.js) holds random prompts and generations for
// every shared tokenizer (byte-level, SentencePiece with byte fallback, Metaspace), with the
// library's decode of the prompt ("head") and of prompt + generation ("full"). Streaming the
// generation through a StreamDecoder primed with the prompt must give full minus head.
//
// Mutations that fail it: priming without context (the first token loses its word-start space
// after a SentencePiece prompt); priming with continuation always on (a generation after an
// empty or all-special prompt keeps the space HF strips); settle_held keeping the held tail
// (a character the generation completes loses its first bytes); token_bytes decoding without
// continuation.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "radiance/text/stream_decoder.h"
#include "tokenizer_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using radiance::text::StreamDecoder;
using radiance::text::TokenId;
using radiance::text::Tokenizer;

const json& fixtures() {
    static const json j = [] {
        std::ifstream in(fs::path(RAD_HF_FIXTURES_DIR) / "incremental.json");
        REQUIRE(in.good());
        return json::parse(in);
    }();
    return j;
}

Tokenizer load(const std::string& name, const json& entry) {
    if (name == "demo") return Tokenizer::from_file(RAD_DEMO_TOKENIZER);
    if (!entry.contains("base")) return tokenizer_test::reference(name);
    std::ifstream in(fs::path(tokenizer_test::shared_dir()) / "tokenizers" / entry["base"].get<std::string>() / "tokenizer.json");
    json t = json::parse(in);
    for (auto it = entry["overrides"].begin(); it != entry["overrides"].end(); ++it) t[it.key()] = it.value();
    return Tokenizer::from_json(t.dump());
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

void replay(const std::string& name) {
    const json& entry = fixtures()["tokenizers"][name];
    const Tokenizer tok = load(name, entry);
    int prefix_cases = 0, rewritten = 0;
    for (size_t k = 0; k < entry["cases"].size(); ++k) {
        const json& c = entry["cases"][k];
        const auto prompt = c["prompt"].get<std::vector<TokenId>>();
        const auto gen = c["gen"].get<std::vector<TokenId>>();
        const bool skip = c["skip"].get<bool>();
        const std::string head = c["head"], full = c["full"];
        INFO(name << " case " << k << " skip " << skip);
        std::vector<TokenId> all = prompt;
        all.insert(all.end(), gen.begin(), gen.end());
        REQUIRE(tok.decode(prompt, skip) == head);  // our decode is HF's (test_hf_fixtures checks more)
        REQUIRE(tok.decode(all, skip) == full);

        StreamDecoder decoder(tok, skip, prompt);
        std::string out, bytes;
        for (TokenId id : gen) {
            const std::string peeked = decoder.peek(id);
            const std::string stepped = decoder.step(id);
            REQUIRE(peeked == stepped);
            out += stepped;
            bytes += tok.token_bytes(id, skip);
        }
        out += decoder.flush();
        if (full.compare(0, head.size(), head) == 0) {
            ++prefix_cases;
            CHECK(out == full.substr(head.size()));
            // Raw token bytes join to the same text wherever it is whole UTF-8 in mid-text.
            if (!head.empty() && full.find(kReplacement) == std::string::npos) CHECK(bytes == out);
        } else {
            // The generation rewrote the prompt's last bytes (completed or broke a character):
            // the text from before the prompt's trailing U+FFFD on is the generation's.
            ++rewritten;
            size_t stable = head.size();
            while (stable >= 3 && std::string_view(head).substr(stable - 3) == kReplacement) stable -= 3;
            if (full.compare(0, stable, head, 0, stable) == 0) CHECK(out == full.substr(stable));
        }
    }
    INFO(name << ": " << prefix_cases << " prefix cases, " << rewritten << " rewritten");
    CHECK(prefix_cases >= 140);
}

}  // namespace

TEST_CASE("tokenizer incremental qwen3", "[tokenizer][incremental]") { replay("qwen3"); }
TEST_CASE("tokenizer incremental llama3", "[tokenizer][incremental]") { replay("llama3"); }
TEST_CASE("tokenizer incremental mistral", "[tokenizer][incremental]") { replay("mistral"); }
TEST_CASE("tokenizer incremental gpt2", "[tokenizer][incremental]") { replay("gpt2"); }
TEST_CASE("tokenizer incremental demo", "[tokenizer][incremental]") { replay("demo"); }
TEST_CASE("tokenizer incremental metaspace first", "[tokenizer][incremental]") { replay("metaspace_first"); }

TEST_CASE("tokenizer incremental SentencePiece word starts", "[tokenizer][incremental]") {
    // The case: "▁than" after "Call me" is " than", not "than"; its raw bytes too.
    const Tokenizer& tok = tokenizer_test::reference("mistral");
    const std::vector<TokenId> prompt = tok.encode("Call me", true);
    const std::vector<TokenId> gen = tok.encode("than than", false);
    StreamDecoder decoder(tok, true, prompt);
    std::string out;
    for (TokenId id : gen) out += decoder.step(id);
    out += decoder.flush();
    CHECK(out == " than than");
    CHECK(tok.token_bytes(gen[0]) == " than");
    auto one = [&](StreamDecoder d) {
        std::string text = d.step(gen[0]);
        return text + d.flush();
    };
    CHECK(one(StreamDecoder(tok, true)) == "than");  // the start of a text: no space
    // After a prompt of only special tokens that are skipped, the text still starts here;
    // shown, "<s>" is text before it (HF: "<s> than").
    const std::vector<TokenId> bos{*tok.bos_id()};
    CHECK(one(StreamDecoder(tok, true, bos)) == "than");
    CHECK(one(StreamDecoder(tok, false, bos)) == " than");
}
