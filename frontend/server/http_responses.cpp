// http_responses.cpp: the small responses every handler builds: JSON, the default error body
// (OpenAI's shape, which the other APIs replace through HttpServer::set_error_formatter) and a
// stream's head.
#include <nlohmann/json.hpp>

#include "http_server.h"

namespace radiance::frontend {

Response json_response(const Request& req, http::status status, const std::string& body) {
    Response res{status, req.version()};
    res.set(http::field::server, "radiance");
    res.set(http::field::content_type, "application/json");
    res.keep_alive(req.keep_alive());
    res.body() = body;
    res.prepare_payload();
    return res;
}

Response error_response(const Request& req, http::status status, const std::string& message, const std::string& type,
                        const std::string& param, const std::string& code) {
    nlohmann::json j = {{"error",
                         {{"message", message},
                          {"type", type},
                          {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
                          {"code", code.empty() ? nlohmann::json(static_cast<int>(status)) : nlohmann::json(code)}}}};
    // Messages may quote request text: never let invalid UTF-8 turn an error into an exception.
    return json_response(req, status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

Response stream_head(const Request& req, http::status status, const std::string& content_type) {
    Response res{status, req.version()};
    res.set(http::field::server, "radiance");
    res.set(http::field::content_type, content_type);
    res.set(http::field::cache_control, "no-cache");
    res.set("X-Accel-Buffering", "no");  // proxies such as nginx would otherwise hold events back
    res.keep_alive(req.keep_alive());
    return res;
}

}  // namespace radiance::frontend
