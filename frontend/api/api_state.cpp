#include "api_state.h"

#include <algorithm>
#include <stdexcept>

#include "api_error.h"

namespace radiance::frontend {

ApiState::ApiState(ApiContext& ctx)
    : ctx_(ctx), responses_(std::make_shared<ResponsesStore>(static_cast<size_t>(std::max(ctx.options.responses_store, 0)))) {
    if (!ctx.chat_template.empty()) chat_template_.emplace(ctx.chat_template);  // a bad template fails start-up
    if (ctx.tool_call_parser.empty()) {
        tool_parser_ = &tools::detect_tool_parser(ctx.chat_template);
    } else if (!(tool_parser_ = tools::find_tool_parser(ctx.tool_call_parser))) {
        std::string names;
        for (const auto& n : tools::tool_parser_names()) names += (names.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown tool-call parser '" + ctx.tool_call_parser + "' (there are " + names + ")");
    }
    stop_token_ids_ = ctx.stop_token_ids;
    if (ctx.tokenizer) {
        if (auto eos = ctx.tokenizer->eos_id()) stop_token_ids_.push_back(*eos);
        // Chat models often end turns with the template's eos_token (<|im_end|>, <|eot_id|>).
        if (!ctx.eos_token.empty())
            if (auto id = ctx.tokenizer->token_to_id(ctx.eos_token)) stop_token_ids_.push_back(*id);
    }
    std::sort(stop_token_ids_.begin(), stop_token_ids_.end());
    stop_token_ids_.erase(std::unique(stop_token_ids_.begin(), stop_token_ids_.end()), stop_token_ids_.end());
}

const text::Tokenizer& ApiState::tokenizer() const {
    if (!ctx_.tokenizer) throw ApiError(http::status::service_unavailable, "no tokenizer is loaded", "", "not_ready");
    return *ctx_.tokenizer;
}

GenerationService& ApiState::service() const {
    if (!ctx_.service) throw ApiError(http::status::service_unavailable, "no model is being served", "", "not_ready");
    return *ctx_.service;
}

const jinja::ChatTemplate& ApiState::chat_template() const {
    if (!chat_template_) throw bad_request("the model has no chat template: use /v1/completions", "messages");
    return *chat_template_;
}

std::string ApiState::model_name() const {
    if (!ctx_.model_name.empty() || !ctx_.service) return ctx_.model_name;
    return ctx_.service->model_info().name;
}

int64_t ApiState::context_length() const {
    if (ctx_.max_context > 0 || !ctx_.service) return ctx_.max_context;
    return ctx_.service->model_info().context_length;
}

int64_t ApiState::vocab_size() const {
    const int64_t model = ctx_.service ? ctx_.service->model_info().vocab_size : 0;
    if (model > 0) return model;
    return ctx_.tokenizer ? static_cast<int64_t>(ctx_.tokenizer->vocab_size()) : 0;
}

void ApiState::check_model(const ordered_json& body) const {
    const auto requested = get_string(body, "model");
    if (!requested || requested->empty() || !ctx_.options.require_model_match) return;
    const std::string served = model_name();
    if (*requested != served)
        throw ApiError(http::status::not_found, "the model '" + *requested + "' does not exist; this server serves '" + served + "'",
                       "model", "model_not_found");
}

int ApiState::plan_max_tokens(size_t prompt_tokens, std::optional<int64_t> requested, const std::string& prompt_param,
                              const std::string& max_param, bool clamp) const {
    const int64_t context = context_length();
    const auto prompt = static_cast<int64_t>(prompt_tokens);
    if (context > 0 && prompt >= context)
        throw bad_request("the prompt is " + std::to_string(prompt) + " tokens; the model's context is " + std::to_string(context) +
                              " tokens, which leaves no room to generate",
                          prompt_param);
    const int64_t room = context > 0 ? context - prompt : INT32_MAX;
    if (!requested) return static_cast<int>(std::min<int64_t>(std::max(ctx_.default_max_tokens, 1), room));
    if (*requested < 1) throw bad_request("'" + max_param + "' must be at least 1", max_param);
    if (*requested > room) {
        if (clamp) return static_cast<int>(room);
        throw bad_request("'" + max_param + "' is " + std::to_string(*requested) + " but the prompt is " + std::to_string(prompt) +
                              " tokens and the context " + std::to_string(context) + ": at most " + std::to_string(room) + " tokens fit",
                          max_param);
    }
    return static_cast<int>(*requested);
}

JobPlan ApiState::new_plan(const ordered_json& body, const std::string& stop_field) const {
    JobPlan plan;
    plan.stop = get_string_list(body, stop_field, ctx_.options.max_stop_strings);
    if (!get_bool(body, "ignore_eos").value_or(false)) plan.stop_token_ids = stop_token_ids_;
    plan.skip_special_tokens = ctx_.options.skip_special_tokens;
    plan.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(ctx_.options.request_timeout_s);
    return plan;
}

void ApiState::check_token_ids(const std::vector<int32_t>& ids, const std::string& param) const {
    const int64_t vocab = vocab_size();
    for (int32_t id : ids)
        if (id < 0 || (vocab > 0 && id >= vocab))
            throw bad_request("token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")", param);
}

}  // namespace radiance::frontend
