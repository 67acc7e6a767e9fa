#include "api_routes.h"

#include <memory>

#include "api_error.h"
#include "api_state.h"
#include "route_handlers.h"

namespace radiance::frontend {

namespace {

bool is_anthropic_path(const Request& req) {
    const std::string_view target(req.target().data(), req.target().size());
    return target.rfind("/v1/messages", 0) == 0;
}

}  // namespace

void register_api_routes(HttpServer& server, ApiContext& ctx) {
    // Shared by every handler; the server's routes keep it alive.
    auto api = std::make_shared<const ApiState>(ctx);
    auto bind = [api](Reply (*handler)(const ApiState&, const Request&)) {
        return [api, handler](const Request& req) { return handler(*api, req); };
    };
    // --task embed: the routes that generate answer 400 saying so
    auto generates = [api, bind](Reply (*handler)(const ApiState&, const Request&)) -> Handler {
        if (!api->ctx().embed_only) return bind(handler);
        return [api](const Request& req) {
            const ApiError e = bad_request(
                "this server runs --task embed: it serves embeddings only (POST /v1/embeddings); start it "
                "without --task embed, or with --embeddings, to generate",
                "model");
            return Reply(is_anthropic_path(req) ? anthropic_error(req, e) : openai_error(req, e));
        };
    };
    server.route(http::verb::post, "/v1/chat/completions", generates(handle_chat_completions));
    server.route(http::verb::post, "/v1/completions", generates(handle_completions));
    server.route(http::verb::post, "/v1/embeddings", bind(handle_embeddings));
    server.route(http::verb::post, "/v1/responses", generates(handle_responses));
    server.route(http::verb::get, "/v1/responses/{id}", bind(handle_response_get));
    server.route(http::verb::get, "/v1/models", bind(handle_models));
    server.route(http::verb::get, "/v1/models/{id}", bind(handle_model));
    server.route(http::verb::post, "/v1/messages", generates(handle_messages));
    server.route(http::verb::post, "/v1/messages/count_tokens", bind(handle_count_tokens));
    server.route(http::verb::post, "/completion", generates(handle_llama_completion));
    server.route(http::verb::post, "/completions", generates(handle_llama_completion));  // llama-server's alias
    server.route(http::verb::post, "/tokenize", bind(handle_tokenize));
    server.route(http::verb::post, "/detokenize", bind(handle_detokenize));
    server.route(http::verb::get, "/props", bind(handle_props));

    server.set_error_formatter([](const Request& req, http::status status, const std::string& message, const std::string& type) {
        if (is_anthropic_path(req)) return anthropic_error(req, ApiError(status, message));
        return error_response(req, status, message, type);
    });
}

}  // namespace radiance::frontend
