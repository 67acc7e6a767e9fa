// api_routes.h: the wire APIs on an HttpServer.
//
//   OpenAI      POST /v1/chat/completions, POST /v1/completions, GET /v1/models
//   Anthropic   POST /v1/messages
//   llama.cpp   POST /completion, POST /tokenize, POST /detokenize, GET /props
//
// docs/API.md lists what each accepts and answers. Also installs an error formatter so the
// server's own errors (401, 404, 413, ...) come in Anthropic's shape on Anthropic routes.
#pragma once
#include "api_context.h"
#include "http_server.h"

namespace radiance::frontend {

// `ctx` must outlive `server`. Throws radiance::jinja::Error if the chat template does not parse.
void register_api_routes(HttpServer& server, ApiContext& ctx);

}  // namespace radiance::frontend
