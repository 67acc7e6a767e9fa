// api_error.h: a request the API layer refuses, and how each wire format shows it.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>

#include "http_server.h"

namespace radiance::frontend {

// Thrown anywhere while a request is read or admitted; the route turns it into a response.
struct ApiError : std::runtime_error {
    http::status status;
    std::string param;  // the offending request field ("messages[2].content", "logit_bias"), or empty
    std::string code;   // a machine-readable code ("model_not_found"), or empty
    ApiError(http::status s, const std::string& message, std::string p = "", std::string c = "")
        : std::runtime_error(message), status(s), param(std::move(p)), code(std::move(c)) {}
};

inline ApiError bad_request(const std::string& message, const std::string& param = "") {
    return ApiError(http::status::bad_request, message, param);
}

// {"error": {"message", "type", "param", "code"}}; 503 and 429 carry Retry-After.
Response openai_error(const Request& req, const ApiError& e);
// {"type": "error", "error": {"type", "message"}}.
Response anthropic_error(const Request& req, const ApiError& e);
// The "type" each format uses for a status.
std::string openai_error_type(http::status s);
std::string anthropic_error_type(http::status s);

enum class ErrorShape { OpenAI, Anthropic };
Response error_in_shape(const Request& req, ErrorShape shape, const ApiError& e);

// Runs a route's handler and answers whatever it throws in the route's error shape: ApiError as
// itself, JSON type errors as 400 (they come from request content), anything else as 500.
// Nothing a request contains gets past this as an exception.
Reply answer_errors(const Request& req, ErrorShape shape, const std::function<Reply()>& handler);

// Calls the GenerationService-facing code and maps its refusals (QueueFull 429, NotReady 503,
// BadRequest 400) to ApiError.
[[noreturn]] void rethrow_service_error(std::exception_ptr e);

}  // namespace radiance::frontend
