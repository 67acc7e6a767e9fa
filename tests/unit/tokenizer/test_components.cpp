// Pipeline components on tiny hand-made tokenizer.json files, each result worked out by
// hand from the `tokenizers` library's rules.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "radiance/text/tokenizer.h"

namespace {

using nlohmann::json;
using radiance::text::TokenId;
using radiance::text::Tokenizer;
using Ids = std::vector<TokenId>;

json bpe(json vocab, json merges = json::array()) { return {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", std::move(merges)}}; }

Tokenizer make(json model, json pre = nullptr, json normalizer = nullptr, json added = json::array(), json post = nullptr,
               json decoder = nullptr) {
    json j = {{"version", "1.0"},
              {"added_tokens", std::move(added)},
              {"normalizer", std::move(normalizer)},
              {"pre_tokenizer", std::move(pre)},
              {"post_processor", std::move(post)},
              {"decoder", std::move(decoder)},
              {"model", std::move(model)}};
    return Tokenizer::from_json(j.dump());
}

json added_token(int id, const std::string& content, bool special, json extra = json::object()) {
    json t = {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
              {"rstrip", false}, {"normalized", false}, {"special", special}};
    t.update(extra);
    return t;
}

json split(const std::string& behavior, bool invert = false) {
    return {{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", invert}};
}

// a=0 b=1 -=2 a-=3 -b=4 --=5; merges a+- (first), -+b, -+-.
const json kSplitVocab = {{"a", 0}, {"b", 1}, {"-", 2}, {"a-", 3}, {"-b", 4}, {"--", 5}};
const json kSplitMerges = {"a -", "- b", "- -"};

}  // namespace

TEST_CASE("tokenizer component split behaviours", "[tokenizer][components]") {
    json model = bpe(kSplitVocab, kSplitMerges);
    CHECK(make(model).encode("a-b", false) == Ids{3, 1});  // one word: a- merges first
    CHECK(make(model, split("Removed")).encode("a-b", false) == Ids{0, 1});
    CHECK(make(model, split("Isolated")).encode("a-b", false) == Ids{0, 2, 1});
    CHECK(make(model, split("MergedWithPrevious")).encode("a-b", false) == Ids{3, 1});
    CHECK(make(model, split("MergedWithNext")).encode("a-b", false) == Ids{0, 4});
    CHECK(make(model, split("Isolated")).encode("a--b", false) == Ids{0, 2, 2, 1});
    CHECK(make(model, split("Contiguous")).encode("a--b", false) == Ids{0, 5, 1});
    CHECK(make(model, split("Removed", true)).encode("a-b", false) == Ids{2});  // keeps only "-"
    json regex = {{"type", "Split"}, {"pattern", {{"Regex", "-+"}}}, {"behavior", "Isolated"}, {"invert", false}};
    CHECK(make(model, regex).encode("a--b", false) == Ids{0, 5, 1});
}

TEST_CASE("tokenizer component digits", "[tokenizer][components]") {
    json model = bpe({{"1", 0}, {"2", 1}, {"12", 2}, {"x", 3}}, {"1 2"});
    json together = {{"type", "Digits"}, {"individual_digits", false}};
    json single = {{"type", "Digits"}, {"individual_digits", true}};
    CHECK(make(model, together).encode("x12x", false) == Ids{3, 2, 3});
    CHECK(make(model, single).encode("x12x", false) == Ids{3, 0, 1, 3});
}

TEST_CASE("tokenizer component metaspace", "[tokenizer][components]") {
    json model = bpe({{"\xE2\x96\x81", 0},
                      {"a", 1},
                      {"b", 2},
                      {"\xE2\x96\x81"
                       "a",
                       3},
                      {"\xE2\x96\x81"
                       "b",
                       4},
                      {"<x>", 5}},
                     {"\xE2\x96\x81 a", "\xE2\x96\x81 b"});
    auto meta = [](const std::string& scheme) {
        return json{{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", scheme}, {"split", true}};
    };
    json added = json::array({added_token(5, "<x>", true)});
    CHECK(make(model, meta("always")).encode("a b", false) == Ids{3, 4});
    CHECK(make(model, meta("never")).encode("a b", false) == Ids{1, 4});
    CHECK(make(model, meta("always"), nullptr, added).encode("a<x>b", false) == Ids{3, 5, 4});
    CHECK(make(model, meta("first"), nullptr, added).encode("a<x>b", false) == Ids{3, 5, 2});
    // Already starting with a space: no second replacement character.
    CHECK(make(model, meta("always")).encode(" a", false) == Ids{3});
    json decoder = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}, {"split", true}};
    Tokenizer t = make(model, meta("always"), nullptr, json::array(), nullptr, decoder);
    CHECK(t.decode(Ids{3, 4}) == "a b");
    CHECK(t.decode(Ids{0, 0, 3}) == "  a");  // the first token's "▁" is dropped, the others are spaces
}

TEST_CASE("tokenizer component added tokens", "[tokenizer][components]") {
    json vocab = {{"a", 0}, {"b", 1}, {" ", 2}, {"c", 3}, {"t", 4}, {"s", 5}, {"d", 6}, {"o", 7}, {"g", 8}, {"H", 9}, {"I", 10}};
    json model = bpe(vocab);  // 11 entries: added tokens not in it are numbered from 11
    SECTION("lstrip and rstrip take the spaces") {
        CHECK(make(model, nullptr, nullptr, json::array({added_token(11, "<m>", true)})).encode("a <m> b", false) == Ids{0, 2, 11, 2, 1});
        CHECK(make(model, nullptr, nullptr, json::array({added_token(11, "<m>", true, {{"lstrip", true}})})).encode("a <m> b", false) ==
              Ids{0, 11, 2, 1});
        CHECK(make(model, nullptr, nullptr, json::array({added_token(11, "<m>", true, {{"rstrip", true}})})).encode("a <m> b", false) ==
              Ids{0, 2, 11, 1});
    }
    SECTION("single_word needs word boundaries") {
        Tokenizer t = make(model, nullptr, nullptr, json::array({added_token(11, "cat", false, {{"single_word", true}})}));
        CHECK(t.encode("a cat", false) == Ids{0, 2, 11});
        CHECK(t.encode("cats", false) == Ids{3, 0, 4, 5});
        CHECK(t.encode("bcat", false) == Ids{1, 3, 0, 4});
    }
    SECTION("longest match at the leftmost position") {
        Tokenizer t = make(model, nullptr, nullptr, json::array({added_token(11, "<a>", true), added_token(12, "<a><b>", true)}));
        CHECK(t.encode("<a><b><a>", false) == Ids{12, 11});
    }
    SECTION("normalized tokens match the normalised text") {
        json lower = {{"type", "Lowercase"}};
        Tokenizer t =
            make(model, nullptr, lower, json::array({added_token(11, "dog", false, {{"normalized", true}}), added_token(12, "HI", true)}));
        CHECK(t.encode("DOG", false) == Ids{11});
        CHECK(t.encode("HI", false) == Ids{12});      // raw match before lowercasing
        CHECK(t.encode("hi", false) == Ids{});        // "h" and "i" are not in the vocabulary
        CHECK(t.decode(Ids{12, 11}, true) == "dog");  // no decoder: tokens joined by spaces
        CHECK(t.decode(Ids{12, 11}, false) == "HI dog");
        CHECK(t.is_special(12));
        CHECK_FALSE(t.is_special(11));
    }
    SECTION("ids come from the vocabulary and the file order, not from the file's ids") {
        Tokenizer t = make(model, nullptr, nullptr,
                           json::array({added_token(999, "<z>", true), added_token(5, "a", true), added_token(7, "<y>", true)}));
        CHECK(t.encode("<z>a<y>", false) == Ids{11, 0, 12});
        CHECK(t.is_special(0));
        CHECK(t.vocab_size() == 13);
    }
}

TEST_CASE("tokenizer component BPE unknowns and byte fallback", "[tokenizer][components]") {
    json vocab = {{"<unk>", 0}, {"a", 1}, {"<0x62>", 2}};
    json fused = bpe(vocab);
    fused["unk_token"] = "<unk>";
    fused["fuse_unk"] = true;
    CHECK(make(fused).encode("axyz", false) == Ids{1, 0});
    json unfused = fused;
    unfused["fuse_unk"] = false;
    CHECK(make(unfused).encode("axyz", false) == Ids{1, 0, 0, 0});
    json fallback = fused;
    fallback["byte_fallback"] = true;
    // "b" has a byte token, "c" does not: it falls back to <unk>.
    CHECK(make(fallback).encode("abc", false) == Ids{1, 2, 0});
    json no_unk = bpe(vocab);
    CHECK(make(no_unk).encode("axa", false) == Ids{1, 1});  // unknown characters vanish
}

TEST_CASE("tokenizer component BPE ranks and ignore_merges", "[tokenizer][components]") {
    json vocab = {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}};
    // "b c" ranks before "a b": abc -> a bc (no merge a+bc).
    json model = bpe(vocab, {"b c", "a b"});
    CHECK(make(model).encode("abc", false) == Ids{0, 4});
    CHECK(make(model).encode("abab", false) == Ids{3, 3});
    model["ignore_merges"] = true;
    CHECK(make(model).encode("abc", false) == Ids{5});  // the whole word is in the vocabulary
    json arrays = bpe(vocab, json::array({json::array({"a", "b"})}));
    CHECK(make(arrays).encode("abc", false) == Ids{3, 2});
}

TEST_CASE("tokenizer component template processing", "[tokenizer][components]") {
    json model = bpe({{"<s>", 1}, {"</s>", 2}, {"a", 3}, {"b", 4}});
    json post = {
        {"type", "TemplateProcessing"},
        {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                                {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                                {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}})},
        {"pair", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                              {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "B"}, {"type_id", 1}}}},
                              {{"SpecialToken", {{"id", "</s>"}, {"type_id", 1}}}}})},
        {"special_tokens",
         {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}, {"</s>", {{"id", "</s>"}, {"ids", {2}}, {"tokens", {"</s>"}}}}}}};
    json added = json::array({added_token(1, "<s>", true), added_token(2, "</s>", true)});
    Tokenizer t = make(model, nullptr, nullptr, added, post);
    CHECK(t.encode("ab", true) == Ids{1, 3, 4, 2});
    CHECK(t.encode("ab", false) == Ids{3, 4});
    CHECK(t.encode_pair("a", "b", true) == Ids{1, 3, 2, 4, 2});
    CHECK(t.encode_pair("a", "b", false) == Ids{3, 4});
    CHECK(t.special_token_ids() == Ids{1, 2});
}

TEST_CASE("tokenizer component decoders", "[tokenizer][components]") {
    json model = bpe({{"\xE2\x96\x81"
                       "a",
                       0},
                      {"<0xE4>", 1},
                      {"<0xBD>", 2},
                      {"<0xA0>", 3},
                      {"b", 4},
                      {"<0xFF>", 5}});
    json decoder = {{"type", "Sequence"},
                    {"decoders", json::array({{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
                                              {{"type", "ByteFallback"}},
                                              {{"type", "Fuse"}},
                                              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}};
    Tokenizer t = make(model, nullptr, nullptr, json::array(), nullptr, decoder);
    CHECK(t.decode(Ids{0, 1, 2, 3, 4}) ==
          "a\xE4\xBD\xA0"
          "b");  // " a" stripped, bytes spell 你
    CHECK(t.decode(Ids{4, 1, 2, 4}) ==
          "b\xEF\xBF\xBD\xEF\xBF\xBD"
          "b");  // incomplete: one U+FFFD per byte
    CHECK(t.decode(Ids{5, 0}) == "\xEF\xBF\xBD a");
    CHECK(t.decode(Ids{0, 0}) == "a a");
    CHECK(t.decode(Ids{99, 4}) == "b");  // unknown ids are ignored
}

TEST_CASE("tokenizer component normalizers", "[tokenizer][components]") {
    json vocab = {{"a", 0}, {"b", 1}, {"e", 2}, {"\xC3\xA9", 3}, {"fi", 4}, {"x", 5}, {" ", 6}, {"_", 7}, {"f", 8}, {"i", 9}};
    json model = bpe(vocab, {"f i"});
    auto seq = [](json items) { return json{{"type", "Sequence"}, {"normalizers", std::move(items)}}; };
    CHECK(make(model, nullptr, {{"type", "NFC"}}).encode("e\xCC\x81", false) == Ids{3});      // e + acute -> é
    CHECK(make(model, nullptr, {{"type", "NFKC"}}).encode("\xEF\xAC\x81", false) == Ids{4});  // ﬁ ligature -> fi
    CHECK(make(model, nullptr, seq({{{"type", "NFD"}}, {{"type", "StripAccents"}}})).encode("\xC3\xA9", false) == Ids{2});
    CHECK(make(model, nullptr, {{"type", "Lowercase"}}).encode("AB\xC3\x89", false) == Ids{0, 1, 3});
    CHECK(make(model, nullptr, {{"type", "Strip"}, {"strip_left", true}, {"strip_right", false}}).encode("  a ", false) == Ids{0, 6});
    json regex_replace = {{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", "_"}};
    CHECK(make(model, nullptr, regex_replace).encode("a \t\n b", false) == Ids{0, 7, 1});
    json prepend = seq({{{"type", "Prepend"}, {"prepend", "x"}}, {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "_"}}});
    CHECK(make(model, nullptr, prepend).encode("a b", false) == Ids{5, 0, 7, 1});
}

TEST_CASE("tokenizer component errors", "[tokenizer][components]") {
    using radiance::text::TokenizerError;
    CHECK_THROWS_AS(Tokenizer::from_json("{not json"), TokenizerError);
    CHECK_THROWS_AS(make({{"type", "Unigram"}, {"vocab", json::array()}}), TokenizerError);
    CHECK_THROWS_AS(make(bpe({{"a", 0}}, {"a b"})), TokenizerError);
    CHECK_THROWS_AS(make(bpe({{"a", 0}}), {{"type", "NoSuchThing"}}), TokenizerError);
    CHECK_THROWS_AS(make(bpe({{"a", 0}}), {{"type", "Split"}, {"pattern", {{"Regex", "("}}}, {"behavior", "Isolated"}}), TokenizerError);
    CHECK_THROWS_AS(Tokenizer::from_file("/nonexistent/tokenizer.json"), TokenizerError);
}

// Ids and counts that are not integers in range are refused by name, never converted: the
// tokenizer fuzzer's find (2026-12-08) was a template special token's "ids": [1e64], which
// nlohmann's get<int32_t> converted with undefined behaviour. Mutation: the template's ids read by
// get<std::vector<int32_t>>() again fails the first two checks (nothing thrown).
TEST_CASE("tokenizer ids that are not integers in range are refused by name", "[tokenizer][components]") {
    using Catch::Matchers::Contains;
    const json model = bpe({{"<s>", 1}, {"a", 3}});
    auto post_with = [](json ids) {
        return json{{"type", "TemplateProcessing"},
                    {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
                    {"pair", json::array({{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
                    {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", std::move(ids)}, {"tokens", {"<s>"}}}}}}};
    };
    CHECK_THROWS_WITH(make(model, nullptr, nullptr, json::array(), post_with(json::array({1e64}))),
                      Contains("template special token's id is 1e+64, not an integer from 0 to 2147483647"));
    CHECK_THROWS_WITH(make(model, nullptr, nullptr, json::array(), post_with(json::array({-1}))), Contains("is -1, not an integer"));
    CHECK_THROWS_WITH(make(model, nullptr, nullptr, json::array(), post_with(7)), Contains("not a list"));
    CHECK_NOTHROW(make(model, nullptr, nullptr, json::array({added_token(1, "<s>", true)}), post_with(json::array({1}))));  // well formed
    CHECK_THROWS_WITH(make(bpe({{"a", 3.5}})), Contains("model.vocab"));  // (the streaming vocab reader's words)
    CHECK_THROWS_WITH(make(bpe({{"a", int64_t{1} << 40}})), Contains("out of range in model.vocab"));
    json added = json::array({added_token(1, "<s>", true)});
    added[0]["id"] = "1";
    CHECK_THROWS_WITH(make(model, nullptr, nullptr, added), Contains("added token's \"id\" is \"1\""));
    const json strip = {{"type", "Strip"}, {"content", " "}, {"start", 1e300}, {"stop", 0}};
    CHECK_THROWS_WITH(make(model, nullptr, nullptr, json::array(), nullptr, strip), Contains("Strip decoder's \"start\" is 1e+300"));
}
