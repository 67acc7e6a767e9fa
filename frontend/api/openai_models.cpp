// GET /v1/models: the one model this server serves.
#include "api_error.h"
#include "route_handlers.h"
#include "wire_output.h"

namespace radiance::frontend {

Reply handle_models(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        ordered_json data = ordered_json::array();
        const std::string name = api.model_name();
        if (!name.empty()) {
            ordered_json model = {{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "radiance"}};
            if (api.context_length() > 0) model["max_model_len"] = api.context_length();
            data.push_back(std::move(model));
        }
        return json_response(req, http::status::ok, dump_json(ordered_json{{"object", "list"}, {"data", std::move(data)}}));
    });
}

}  // namespace radiance::frontend
