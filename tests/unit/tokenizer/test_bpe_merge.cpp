// The two BPE merge loops (linear scan for short words, heap for long ones) must agree.
#include <fstream>
#include <random>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "bpe_model.h"  // internal header of rad_tokenizer
#include "tokenizer_test_util.h"

TEST_CASE("tokenizer BPE linear and heap merges agree", "[tokenizer][bpe]") {
    std::ifstream in(tokenizer_test::shared_dir() + "/tokenizers/llama3/tokenizer.json");
    nlohmann::json j = nlohmann::json::parse(in);
    j["model"]["ignore_merges"] = false;  // otherwise whole-word hits skip the merge loops
    radiance::text::BpeModel heap = radiance::text::parse_bpe_model(j["model"], 0);
    radiance::text::BpeModel linear = radiance::text::parse_bpe_model(j["model"], 1 << 30);

    std::ifstream corpus(tokenizer_test::shared_dir() + "/corpus/moby-dick.txt");
    std::string book((std::istreambuf_iterator<char>(corpus)), std::istreambuf_iterator<char>());
    std::mt19937 rng(17);
    std::uniform_int_distribution<size_t> start(0, book.size() - 200), length(1, 80);
    for (int i = 0; i < 3000; ++i) {
        // Raw byte strings: slices of the book and random text, cut anywhere.
        std::string word = i % 2 ? book.substr(start(rng), length(rng)) : tokenizer_test::random_text(rng, 30);
        std::vector<int32_t> a, b;
        heap.encode_byte_level(word, a);
        linear.encode_byte_level(word, b);
        INFO("word " << i);
        REQUIRE(a == b);
    }
}
