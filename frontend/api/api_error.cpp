#include "api_error.h"

#include "generation.h"
#include "json_io.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

namespace {

void add_retry_after(Response& res) {
    if (res.result() == http::status::service_unavailable || res.result() == http::status::too_many_requests) {
        res.set(http::field::retry_after, "1");
    }
}

}  // namespace

std::string openai_error_type(http::status s) {
    switch (s) {
    case http::status::unauthorized: return "authentication_error";
    case http::status::not_found: return "not_found_error";
    case http::status::too_many_requests: return "rate_limit_error";
    case http::status::service_unavailable: return "service_unavailable_error";
    case http::status::gateway_timeout: return "timeout_error";
    default: return static_cast<int>(s) >= 500 ? "server_error" : "invalid_request_error";
    }
}

std::string anthropic_error_type(http::status s) {
    switch (s) {
    case http::status::unauthorized: return "authentication_error";
    case http::status::forbidden: return "permission_error";
    case http::status::not_found: return "not_found_error";
    case http::status::payload_too_large: return "request_too_large";
    case http::status::too_many_requests: return "rate_limit_error";
    case http::status::service_unavailable: return "overloaded_error";
    default: return static_cast<int>(s) >= 500 ? "api_error" : "invalid_request_error";
    }
}

Response openai_error(const Request& req, const ApiError& e) {
    Response res = error_response(req, e.status, e.what(), openai_error_type(e.status), e.param, e.code);
    add_retry_after(res);
    return res;
}

Response anthropic_error(const Request& req, const ApiError& e) {
    nlohmann::json j = {{"type", "error"}, {"error", {{"type", anthropic_error_type(e.status)}, {"message", e.what()}}}};
    Response res = json_response(req, e.status, dump_json(j));
    add_retry_after(res);
    return res;
}

Response error_in_shape(const Request& req, ErrorShape shape, const ApiError& e) {
    return shape == ErrorShape::Anthropic ? anthropic_error(req, e) : openai_error(req, e);
}

Reply answer_errors(const Request& req, ErrorShape shape, const std::function<Reply()>& handler) {
    try {
        return handler();
    } catch (const ApiError& e) {
        return error_in_shape(req, shape, e);
    } catch (const nlohmann::json::exception& e) {
        return error_in_shape(req, shape, bad_request(std::string("invalid request: ") + e.what()));
    } catch (const std::exception& e) {
        log::error("request to ", std::string(req.target()), " failed: ", e.what());
        return error_in_shape(req, shape, ApiError(http::status::internal_server_error, e.what()));
    }
}

void rethrow_service_error(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const ApiError&) {
        throw;
    } catch (const QueueFull& q) {
        throw ApiError(http::status::too_many_requests, std::string("the server is busy: ") + q.what(), "", "queue_full");
    } catch (const NotReady& n) {
        throw ApiError(http::status::service_unavailable, std::string("the model is not ready: ") + n.what(), "", "not_ready");
    } catch (const BadRequest& b) {
        throw ApiError(http::status::bad_request, b.what(), b.param);
    }
}

}  // namespace radiance::frontend
