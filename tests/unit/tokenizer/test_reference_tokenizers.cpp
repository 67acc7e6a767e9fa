// The real tokenizers: GPT-2 from its original files, and the accessors the server uses.
#include <catch2/catch.hpp>

#include "tokenizer_test_util.h"

using radiance::text::TokenId;
using Ids = std::vector<TokenId>;

TEST_CASE("tokenizer gpt2 encoder.json + vocab.bpe", "[tokenizer][gpt2]") {
    const auto& tok = tokenizer_test::reference("gpt2");
    CHECK(tok.vocab_size() == 50257);
    CHECK(tok.encode("Hello world", false) == Ids{15496, 995});
    CHECK(tok.encode("<|endoftext|>", false) == Ids{50256});
    CHECK(tok.eos_id() == 50256);
    CHECK(tok.decode(Ids{15496, 995, 50256}, true) == "Hello world");
    CHECK(tok.decode(Ids{15496, 995, 50256}, false) == "Hello world<|endoftext|>");
    for (const char* text : {"", " ", "  leading spaces", "naïve café", "tabs\tand\r\nlines", "emoji 👍🏽 done", "numbers 1234567 3.14",
                             "don't I'll we've"})
        CHECK(tok.decode(tok.encode(text, false)) == text);
}

TEST_CASE("tokenizer accessors", "[tokenizer][accessors]") {
    const auto& qwen = tokenizer_test::reference("qwen3");
    CHECK(qwen.vocab_size() == 151669);
    CHECK(qwen.token_to_id("<|im_end|>") == 151645);
    CHECK(qwen.id_to_token(151645) == "<|im_end|>");
    CHECK(qwen.id_to_token(9707) == "Hello");
    CHECK(qwen.is_special(151645));
    CHECK_FALSE(qwen.is_special(9707));
    CHECK(qwen.eos_token() == "<|im_end|>");
    CHECK(qwen.eos_id() == 151645);
    CHECK_FALSE(qwen.bos_id().has_value());  // bos_token is null in its tokenizer_config.json
    CHECK(qwen.added_tokens().size() == 26);
    CHECK_FALSE(qwen.id_to_token(-1).has_value());
    CHECK_FALSE(qwen.id_to_token(1 << 30).has_value());

    const auto& llama = tokenizer_test::reference("llama3");
    CHECK(llama.vocab_size() == 128256);
    CHECK(llama.bos_id() == 128000);
    CHECK(llama.eos_id() == 128001);
    CHECK(llama.special_token_ids().size() == 256);

    const auto& mistral = tokenizer_test::reference("mistral");
    CHECK(mistral.vocab_size() == 32000);
    CHECK(mistral.bos_token() == "<s>");
    CHECK(mistral.bos_id() == 1);
    CHECK(mistral.eos_id() == 2);
    CHECK(mistral.encode("Hello world", true) == Ids{1, 22557, 1526});
}

TEST_CASE("tokenizer copies share one loaded pipeline", "[tokenizer][accessors]") {
    radiance::text::Tokenizer copy = tokenizer_test::reference("llama3");
    CHECK(&copy.impl() == &tokenizer_test::reference("llama3").impl());
    CHECK(copy.encode("Hello world", false) == Ids{9906, 1917});
}
