// api_context.h: what the wire APIs need from the rest of the front end. Filled in by main.cpp
// and handed to register_api_routes(); it must outlive the HttpServer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "generation.h"
#include "radiance/text/tokenizer.h"

namespace radiance::frontend {

struct ApiOptions {
    bool skip_special_tokens = true;  // in generated text, as transformers' decode(skip_special_tokens=True)
    bool require_model_match = true;  // a request naming another model gets 404 (a missing or empty name is fine)
    int max_n = 128;                  // choices per request
    int max_top_logprobs = 20;
    int max_stop_strings = 16;
    int request_timeout_s = 600;  // becomes GenerationRequest::deadline
    // Responses the Responses API keeps for GET /v1/responses/{id} and previous_response_id
    // (--responses-store); past it the oldest are forgotten. 0 keeps none.
    int responses_store = 1024;
};

struct ApiContext {
    const text::Tokenizer* tokenizer = nullptr;
    std::string chat_template;  // Jinja source; empty: chat endpoints answer 400
    std::string bos_token;      // passed to the template as bos_token / eos_token
    std::string eos_token;
    std::string model_name;  // empty: GenerationService::model_info().name
    GenerationService* service = nullptr;
    int64_t max_context = 0;              // 0: GenerationService::model_info().context_length
    int default_max_tokens = 1024;        // when a request names none (capped by what fits)
    // End generation, beside the tokenizer's EOS and eos_token's id: the checkpoint's
    // generation_config.json eos ids (Llama 3.1's <|eom_id|>, Qwen3's <|endoftext|>)
    std::vector<int32_t> stop_token_ids;
    // The tool-call parser (tool_calls/tool_call_parser.h: hermes, llama3_json, mistral, json);
    // empty: the one the chat template calls for. An unknown name fails ApiState's construction.
    std::string tool_call_parser;
    // Embeddings (POST /v1/embeddings): served at all (--embeddings, --task embed), or only
    // (--task embed: the generation routes answer 400); how the checkpoint pools and whether it
    // normalises (sentence-transformers' 1_Pooling and Normalize, kept in the container's metadata)
    bool embeddings = false;
    bool embed_only = false;
    Pooling embedding_pooling = Pooling::Last;
    bool embedding_normalize = true;
    ApiOptions options;
};

}  // namespace radiance::frontend
