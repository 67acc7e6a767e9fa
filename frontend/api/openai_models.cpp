// GET /v1/models: the one model this server serves; GET /v1/models/{id}: that model, or a 404
// naming the id asked for.
#include "api_error.h"
#include "route_handlers.h"
#include "wire_output.h"

namespace radiance::frontend {

namespace {

ordered_json model_object(const ApiState& api) {
    ordered_json model = {{"id", api.model_name()}, {"object", "model"}, {"created", 0}, {"owned_by", "radiance"}};
    if (api.context_length() > 0) model["max_model_len"] = api.context_length();
    return model;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The id as the client meant it: SDKs percent-encode the '/' of "org/name" ids, curl does not.
std::string percent_decoded(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        const int hi = s[i] == '%' && i + 2 < s.size() ? hex_value(s[i + 1]) : -1, lo = hi >= 0 ? hex_value(s[i + 2]) : -1;
        if (lo >= 0) {
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

}  // namespace

Reply handle_models(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        ordered_json data = ordered_json::array();
        if (!api.model_name().empty()) data.push_back(model_object(api));
        return json_response(req, http::status::ok, dump_json(ordered_json{{"object", "list"}, {"data", std::move(data)}}));
    });
}

Reply handle_model(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        static constexpr std::string_view kPrefix = "/v1/models/";
        std::string_view target(req.target().data(), req.target().size());
        target = target.substr(0, target.find('?'));
        const std::string id = percent_decoded(target.substr(std::min(kPrefix.size(), target.size())));
        if (api.model_name().empty() || id != api.model_name())
            throw ApiError(http::status::not_found, "The model '" + id + "' does not exist (this server serves '" + api.model_name() + "')",
                           "model", "model_not_found");
        return json_response(req, http::status::ok, dump_json(model_object(api)));
    });
}

}  // namespace radiance::frontend
