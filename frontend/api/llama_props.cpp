// GET /props: llama-server's server properties: the model, its context, the chat template and
// whatever GenerationService::stats_json() reports (KV usage, queue).
#include "api_error.h"
#include "route_handlers.h"
#include "wire_output.h"

namespace radiance::frontend {

Reply handle_props(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        const int64_t n_ctx = api.context_length();
        ordered_json props = {
            {"model", api.model_name()},
            {"model_alias", api.model_name()},
            {"n_ctx", n_ctx},
            {"default_generation_settings",
             {{"n_ctx", n_ctx},
              {"params", {{"n_predict", api.ctx().default_max_tokens}, {"temperature", 1.0}, {"top_p", 1.0}, {"top_k", 0}}}}},
            {"total_slots", 1},
            {"chat_template", api.ctx().chat_template},
            {"bos_token", api.ctx().bos_token},
            {"eos_token", api.ctx().eos_token},
            {"vocab_size", api.vocab_size()},
            {"build_info", "radiance"}};
        if (api.ctx().service) {
            props["ready"] = api.ctx().service->ready();
            const json stats = api.ctx().service->stats_json();
            props["stats"] = stats.is_null() ? ordered_json::object() : ordered_json(stats);
        }
        return json_response(req, http::status::ok, dump_json(props));
    });
}

}  // namespace radiance::frontend
