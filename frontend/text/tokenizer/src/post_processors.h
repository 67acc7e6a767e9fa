// post_processors.h: the "post_processor" stage: special tokens around encoded sequences
// (TemplateProcessing for BOS/EOS, Bert, Roberta), ByteLevel (ids unchanged), Sequence.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace radiance::text {

class PostProcessor {
public:
    virtual ~PostProcessor() = default;
    // encodings holds one sequence (single) or two (pair); processors may merge them.
    virtual void process(std::vector<std::vector<int32_t>>& encodings, bool add_special_tokens) const = 0;
};

std::unique_ptr<PostProcessor> parse_post_processor(const nlohmann::json& j);

// The template transformers installs for add_bos_token/add_eos_token (bos/eos id < 0: absent).
std::unique_ptr<PostProcessor> make_bos_eos_template(int32_t bos_id, int32_t eos_id);

}  // namespace radiance::text
