// POST /v1/embeddings (OpenAI's shape): input as a string, an array of strings, an array of token
// ids or an array of arrays of token ids; encoding_format float or base64; dimensions
// (Matryoshka: truncated, then normalised again). Each input is one embedding request of the
// GenerationService (GenerationRequest::embed): prefill only, its pooled hidden state back through
// the sink; the answer goes once every input is in, in input order.
#include <mutex>

#include "api_error.h"
#include "embedding_vectors.h"
#include "route_handlers.h"
#include "wire_output.h"

namespace radiance::frontend {

namespace {

// Inputs a request may carry (OpenAI allows 2048).
constexpr size_t kMaxInputs = 2048;

struct EmbedShape {
    std::vector<std::vector<int32_t>> inputs;
    bool base64 = false;
    int64_t dimensions = 0;  // 0: the model's width
};

// One token list from a JSON array of integers, or 400 naming `param`.
std::vector<int32_t> token_list(const ordered_json& a, const std::string& param) {
    std::vector<int32_t> ids;
    for (const auto& v : a) {
        if (!v.is_number_integer()) throw bad_request("'" + param + "' must hold token ids (integers), got " + json_type_name(v), param);
        const int64_t id = v.get<int64_t>();
        if (id < 0 || id > INT32_MAX) throw bad_request("token id " + std::to_string(id) + " is outside the vocabulary", param);
        ids.push_back(static_cast<int32_t>(id));
    }
    return ids;
}

EmbedShape read_request(const ApiState& api, const ordered_json& body) {
    EmbedShape s;
    auto it = body.find("input");
    if (it == body.end() || it->is_null()) throw bad_request("'input' is required: a string, an array of strings, or token ids", "input");
    const ordered_json& in = *it;
    const auto& tok = api.tokenizer();
    // Text is tokenised with the tokenizer's special tokens (its post-processor: BOS, or the EOS
    // decoder embedders such as Qwen3-Embedding pool), as vLLM and sentence-transformers do.
    auto text = [&](const ordered_json& v, const std::string& param) {
        const std::string t = v.get<std::string>();
        if (t.empty()) throw bad_request("'" + param + "' is empty", param);
        return tok.encode(t, true);
    };
    if (in.is_string()) {
        s.inputs.push_back(text(in, "input"));
    } else if (in.is_array()) {
        if (in.empty()) throw bad_request("'input' is an empty array", "input");
        if (in[0].is_number_integer()) {
            s.inputs.push_back(token_list(in, "input"));
        } else {
            if (in.size() > kMaxInputs)
                throw bad_request("'input' holds " + std::to_string(in.size()) + " inputs; at most " + std::to_string(kMaxInputs), "input");
            for (size_t i = 0; i < in.size(); ++i) {
                const std::string param = "input[" + std::to_string(i) + "]";
                if (in[i].is_string()) {
                    s.inputs.push_back(text(in[i], param));
                } else if (in[i].is_array()) {
                    if (in[i].empty()) throw bad_request("'" + param + "' is an empty array", param);
                    s.inputs.push_back(token_list(in[i], param));
                } else {
                    throw bad_request("'" + param + "' must be a string or an array of token ids, got " + json_type_name(in[i]), param);
                }
            }
        }
    } else {
        throw bad_request("'input' must be a string or an array, got " + json_type_name(in), "input");
    }
    for (size_t i = 0; i < s.inputs.size(); ++i) {
        const bool one = in.is_string() || in[0].is_number_integer();  // a string or one token list: no index
        const std::string param = one ? "input" : "input[" + std::to_string(i) + "]";
        api.check_token_ids(s.inputs[i], param);
        if (const int64_t ctx = api.context_length(); ctx > 0 && static_cast<int64_t>(s.inputs[i].size()) > ctx)
            throw bad_request(
                "'" + param + "' has " + std::to_string(s.inputs[i].size()) + " tokens; the context holds " + std::to_string(ctx), param);
    }
    const std::string format = get_string(body, "encoding_format").value_or("float");
    if (format != "float" && format != "base64")
        throw bad_request("'encoding_format' must be \"float\" or \"base64\", got \"" + format + "\"", "encoding_format");
    s.base64 = format == "base64";
    const int64_t width = api.service().model_info().hidden_size;
    if (auto d = get_int(body, "dimensions", 1, INT32_MAX)) {
        if (*d > width)
            throw bad_request("'dimensions' is " + std::to_string(*d) + "; this model's embeddings have " + std::to_string(width),
                              "dimensions");
        s.dimensions = *d;
    }
    return s;
}

// Collects every input's vector and answers once the last is in (or the first fails).
class EmbedAnswer {
public:
    EmbedAnswer(std::shared_ptr<StreamWriter> w, Request head, EmbedShape shape, std::string model, bool normalize)
        : writer_(std::move(w)),
          head_(std::move(head)),
          shape_(std::move(shape)),
          model_(std::move(model)),
          normalize_(normalize),
          vectors_(shape_.inputs.size()) {}

    void got(size_t i, const std::vector<float>& pooled) {
        std::lock_guard lk(mu_);
        vectors_[i] = finish_embedding(pooled, shape_.dimensions, normalize_);
    }
    void finished(size_t i, FinishReason why, const std::string& error) {
        std::lock_guard lk(mu_);
        if (answered_) return;
        if (why != FinishReason::Stop || vectors_[i].empty()) {
            answered_ = true;
            const std::string what = why == FinishReason::Cancelled ? "the request was cancelled"
                                     : error.empty()                ? "the embedding failed"
                                                                    : error;
            writer_->respond(openai_error(head_, ApiError(http::status::internal_server_error, what)));
            return;
        }
        if (++done_ < vectors_.size()) return;
        answered_ = true;
        ordered_json data = ordered_json::array();
        int64_t tokens = 0;
        for (size_t k = 0; k < vectors_.size(); ++k) {
            tokens += static_cast<int64_t>(shape_.inputs[k].size());
            ordered_json e = {{"object", "embedding"}, {"index", k}};
            if (shape_.base64)
                e["embedding"] = embedding_base64(vectors_[k]);
            else
                e["embedding"] = vectors_[k];
            data.push_back(std::move(e));
        }
        respond_json(*writer_, head_, http::status::ok,
                     ordered_json{{"object", "list"},
                                  {"data", std::move(data)},
                                  {"model", model_},
                                  {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}});
    }
    const EmbedShape& shape() const { return shape_; }

private:
    std::mutex mu_;
    std::shared_ptr<StreamWriter> writer_;
    Request head_;
    EmbedShape shape_;
    std::string model_;
    bool normalize_;
    std::vector<std::vector<float>> vectors_;
    size_t done_ = 0;
    bool answered_ = false;
};

class EmbedSink final : public GenerationSink {
public:
    EmbedSink(std::shared_ptr<EmbedAnswer> a, size_t i) : answer_(std::move(a)), i_(i) {}
    void on_tokens(const std::vector<TokenEvent>&) override {}
    void on_embedding(const std::vector<float>& pooled) override { answer_->got(i_, pooled); }
    void on_finish(FinishReason why, const std::string& error) override { answer_->finished(i_, why, error); }

private:
    std::shared_ptr<EmbedAnswer> answer_;
    size_t i_;
};

}  // namespace

Reply handle_embeddings(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        const ApiContext& ctx = api.ctx();
        if (!ctx.embeddings)
            throw bad_request(
                "this server does not serve embeddings: start it with --embeddings (generation and embeddings) or "
                "--task embed (embeddings only)",
                "model");
        const ordered_json body = parse_body(req.body());
        api.check_model(body);
        EmbedShape shape = read_request(api, body);
        auto writer = std::make_shared<StreamWriter>();
        auto answer = std::make_shared<EmbedAnswer>(writer, request_head(req), std::move(shape), api.model_name(), ctx.embedding_normalize);
        GenerationService& service = api.service();
        std::vector<uint64_t> ids;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(ctx.options.request_timeout_s);
        try {
            for (size_t i = 0; i < answer->shape().inputs.size(); ++i) {
                GenerationRequest g;
                g.prompt = answer->shape().inputs[i];
                g.embed = ctx.embedding_pooling;
                g.max_tokens = 1;
                g.deadline = deadline;
                ids.push_back(service.submit(std::move(g), std::make_shared<EmbedSink>(answer, i)));
            }
        } catch (...) {
            for (uint64_t id : ids) service.cancel(id);
            rethrow_service_error(std::current_exception());
        }
        writer->on_client_gone([&service, ids] {
            for (uint64_t id : ids) service.cancel(id);
        });
        return Reply::deferred(writer);
    });
}

}  // namespace radiance::frontend
