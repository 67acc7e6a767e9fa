// gguf_source.h: a GGUF file as rad-convert's SRC, with no Hugging Face folder: its metadata as
// the config.json the llama family's declaration reads (general.architecture llama, qwen2,
// qwen3), its vocabulary (tokenizer.ggml.*) as a tokenizer.json, and its tensors under
// transformers' names, decoded to f32 through libquant's `ggml` quantiser and the core's decoder
// (so the values are the import's own, exactly), for the converter's checks and error report.
// The weights themselves are written by the default recipe, `* ggml file=SRC` (gguf_recipe).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "radiance/convert/safetensors.h"
#include "radiance/core/registry.h"

namespace radiance::convert {

// Whether `path` is a regular file that starts with the GGUF magic.
bool is_gguf_file(const std::string& path);

struct GgufSource {
    nlohmann::json config;         // as a Hugging Face config.json would say it
    std::string tokenizer_json;    // "" where the vocabulary is not one written here (see note)
    std::string tokenizer_config;  // bos/eos tokens, add_bos_token, chat_template
    std::string chat_template;     // tokenizer.chat_template, or ""
    std::string note;              // what was left out, for the log
};

// Reads the file's metadata and vocabulary. Throws radiance::Error naming the file and the key
// for an architecture other than llama, qwen2, qwen3, a required key missing, or a malformed file.
GgufSource read_gguf_source(const std::string& path);

// The recipe a GGUF SRC converts by when none is given: the embedding (and a qwen2's fused q/k/v
// bias) plain f32, being read by the llama family unquantised, every other weight `ggml` from
// the file itself.
std::string gguf_recipe(const std::string& path, const nlohmann::json& config);

// Every tensor of the file under transformers' name, as f32 values decoded from what the `ggml`
// quantiser imports (a llama's q/k rows back in transformers' order), each decoded when the
// converter first reads it and dropped after the weight it went into (Checkpoint::add_lazy), so
// one weight's f32 is held at a time. Throws radiance::Error naming the tensor and the file.
Checkpoint gguf_checkpoint(const core::Registry& reg, const std::string& path);

}  // namespace radiance::convert
