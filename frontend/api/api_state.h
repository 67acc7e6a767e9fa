// api_state.h: what every route reads: the ApiContext plus what is derived from it once (the
// parsed chat template, the stop tokens), and the checks every generation request shares.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api_context.h"
#include "generation_job.h"
#include "json_io.h"
#include "responses_store.h"
#include "radiance/jinja/chat_template.h"
#include "structured_output.h"
#include "tool_call_parser.h"

namespace radiance::frontend {

class ApiState {
public:
    explicit ApiState(ApiContext& ctx);

    const ApiContext& ctx() const { return ctx_; }
    const text::Tokenizer& tokenizer() const;          // 503 when none is loaded
    GenerationService& service() const;                // 503 when none is attached
    const jinja::ChatTemplate& chat_template() const;  // 400 when the model has none
    std::string model_name() const;
    int64_t context_length() const;  // 0: unknown
    int64_t vocab_size() const;      // ids the model accepts
    const std::vector<int32_t>& stop_token_ids() const { return stop_token_ids_; }

    // 404 (param "model") when the body names a model other than the one served.
    void check_model(const ordered_json& body) const;
    // The tokens to generate: the requested number (400 naming max_param when it does not fit
    // unless clamp) or the default, capped to what fits; 400 naming prompt_param when the prompt
    // alone fills the context.
    int plan_max_tokens(size_t prompt_tokens, std::optional<int64_t> requested, const std::string& prompt_param,
                        const std::string& max_param, bool clamp) const;
    // A job's stop strings (from stop_field), stop tokens (none with "ignore_eos": true),
    // deadline and detokenizer setting; the caller adds the choices.
    JobPlan new_plan(const ordered_json& body, const std::string& stop_field) const;
    // 400 naming param for an id the model does not have.
    void check_token_ids(const std::vector<int32_t>& ids, const std::string& param) const;
    // Structured output's compiled grammars (shared by every route; locked inside).
    GrammarCache& grammars() const { return *grammars_; }
    // The parser of the model's tool-call markup: ApiContext::tool_call_parser, else the chat
    // template's (json when it has no markup).
    const tools::ToolCallParser& tool_parser() const { return *tool_parser_; }
    // The Responses API's stored responses (locked inside); shared with the jobs that add to it,
    // which may end after a route is gone.
    std::shared_ptr<ResponsesStore> responses() const { return responses_; }

private:
    ApiContext& ctx_;
    std::optional<jinja::ChatTemplate> chat_template_;
    std::vector<int32_t> stop_token_ids_;
    const tools::ToolCallParser* tool_parser_ = nullptr;
    std::unique_ptr<GrammarCache> grammars_ = std::make_unique<GrammarCache>();
    std::shared_ptr<ResponsesStore> responses_;
};

}  // namespace radiance::frontend
