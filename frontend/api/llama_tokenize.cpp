// POST /tokenize and POST /detokenize: llama-server's tokenizer endpoints.
#include "api_error.h"
#include "route_handlers.h"
#include "wire_output.h"

namespace radiance::frontend {

Reply handle_tokenize(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        const ordered_json body = parse_body(req.body());
        const auto content = get_string(body, "content");
        if (!content) throw bad_request("'content' is required (a string)", "content");
        const bool add_special = get_bool(body, "add_special").value_or(false);
        const bool with_pieces = get_bool(body, "with_pieces").value_or(false);
        const auto& tok = api.tokenizer();
        ordered_json tokens = ordered_json::array();
        for (int32_t id : tok.encode(*content, add_special)) {
            if (!with_pieces) {
                tokens.push_back(id);
                continue;
            }
            // As llama-server: the token's text as it stands in a text (a word-start space
            // included), or its bytes when they are not whole UTF-8 (a piece of a character).
            const std::string piece = tok.token_bytes(id);
            ordered_json shown = ordered_json::array();
            if (text::is_valid_utf8(piece)) {
                shown = piece;
            } else {
                for (unsigned char c : piece) shown.push_back(static_cast<int>(c));
            }
            tokens.push_back({{"id", id}, {"piece", std::move(shown)}});
        }
        return json_response(req, http::status::ok, dump_json(ordered_json{{"tokens", std::move(tokens)}}));
    });
}

Reply handle_detokenize(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        const ordered_json body = parse_body(req.body());
        auto it = body.find("tokens");
        if (it == body.end() || !it->is_array()) throw bad_request("'tokens' is required (an array of token ids)", "tokens");
        std::vector<int32_t> ids;
        for (const auto& v : *it) {
            if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
                throw bad_request("'tokens' must hold token ids", "tokens");
            ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
        }
        api.check_token_ids(ids, "tokens");
        return json_response(req, http::status::ok, dump_json(ordered_json{{"content", api.tokenizer().decode(ids)}}));
    });
}

}  // namespace radiance::frontend
