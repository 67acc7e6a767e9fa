// One Tokenizer shared by several threads gives every thread the single-threaded results
// (the word cache and regex match state are per thread).
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "radiance/text/stream_decoder.h"
#include "tokenizer_test_util.h"

TEST_CASE("tokenizer concurrent encode and decode", "[tokenizer][threads]") {
    using radiance::text::TokenId;
    for (const char* name : {"qwen3", "mistral"}) {
        const auto& tok = tokenizer_test::reference(name);
        std::mt19937 rng(21);
        std::vector<std::string> texts;
        for (int i = 0; i < 200; ++i) texts.push_back(tokenizer_test::random_text(rng));
        std::vector<std::vector<TokenId>> want;
        for (const auto& t : texts) want.push_back(tok.encode(t, true));

        constexpr int kThreads = 4;
        std::vector<int> failures(kThreads, 0);
        std::vector<std::thread> threads;
        for (int k = 0; k < kThreads; ++k) {
            threads.emplace_back([&, k] {
                for (size_t i = 0; i < texts.size(); ++i) {
                    size_t j = (i * 7 + k * 31) % texts.size();  // each thread in another order
                    std::vector<TokenId> ids = tok.encode(texts[j], true);
                    if (ids != want[j]) ++failures[k];
                    radiance::text::StreamDecoder stream(tok);
                    std::string text;
                    for (TokenId id : ids) text += stream.step(id);
                    if (text + stream.flush() != tok.decode(ids)) ++failures[k];
                }
            });
        }
        for (auto& t : threads) t.join();
        for (int k = 0; k < kThreads; ++k) CHECK(failures[k] == 0);
    }
}
