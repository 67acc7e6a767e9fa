// golden_file.h: a fixture's transformers references, as rad-golden compares with them.
//
// DIR/golden.safetensors holds each promptN's ids, its prompt logits (float32 [n, vocab]) and
// transformers' greedy continuation; the decode references (tools/golden/decode_refs.py, in
// DIR/decode.safetensors or a file named by --decode-ref) add the logits at every position of that
// continuation, so a decode step's logits can be compared too, not only the prompt's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace radiance::golden {

struct Prompt {
    std::string name;
    std::vector<int32_t> ids, greedy;
    std::vector<float> logits;         // [ids.size(), vocab]
    std::vector<int32_t> fed;          // the tokens fed at positions n .. n+G-1 (empty: no decode reference)
    std::vector<float> decode_logits;  // [fed.size(), vocab]: row k predicts the token after fed[k]
};

// Throws radiance::Error naming the file and the missing or malformed tensor.
std::vector<Prompt> load_golden(const std::string& path);
// Adds the decode references of `path` to every prompt; each must have them, fed equal to its
// greedy tokens (the references were made for this fixture, not another).
void load_decode(const std::string& path, std::vector<Prompt>& prompts, int64_t vocab);

}  // namespace radiance::golden
