// route_handlers.h: one function per endpoint; api_routes.cpp binds them to paths.
#pragma once
#include "api_state.h"
#include "http_server.h"

namespace radiance::frontend {

// OpenAI (openai_chat.cpp, openai_completions.cpp, openai_models.cpp)
Reply handle_chat_completions(const ApiState& api, const Request& req);
Reply handle_completions(const ApiState& api, const Request& req);
Reply handle_models(const ApiState& api, const Request& req);
Reply handle_model(const ApiState& api, const Request& req);
Reply handle_embeddings(const ApiState& api, const Request& req);  // openai_embeddings.cpp
// OpenAI Responses (openai_responses.cpp): POST /v1/responses, GET /v1/responses/{id}
Reply handle_responses(const ApiState& api, const Request& req);
Reply handle_response_get(const ApiState& api, const Request& req);
// Anthropic (anthropic_messages.cpp)
Reply handle_messages(const ApiState& api, const Request& req);
Reply handle_count_tokens(const ApiState& api, const Request& req);
// llama-server (llama_completion.cpp, llama_tokenize.cpp, llama_props.cpp)
Reply handle_llama_completion(const ApiState& api, const Request& req);
Reply handle_tokenize(const ApiState& api, const Request& req);
Reply handle_detokenize(const ApiState& api, const Request& req);
Reply handle_props(const ApiState& api, const Request& req);

}  // namespace radiance::frontend
