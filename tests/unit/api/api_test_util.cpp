#include "api_test_util.h"

#include <fstream>
#include <sstream>

namespace api_test {

using namespace radiance;
using namespace radiance::frontend;

namespace {

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

const std::string kDir = std::string(RAD_SHARED_DIR) + "/tokenizers/qwen3/";

}  // namespace

const text::Tokenizer& qwen3_tokenizer() {
    static const text::Tokenizer tok = text::Tokenizer::from_file(kDir + "tokenizer.json", kDir + "tokenizer_config.json");
    return tok;
}

const text::Tokenizer& mistral_tokenizer() {
    const std::string dir = std::string(RAD_SHARED_DIR) + "/tokenizers/mistral/";
    static const text::Tokenizer tok = text::Tokenizer::from_file(dir + "tokenizer.json", dir + "tokenizer_config.json");
    return tok;
}

const std::string& qwen3_chat_template() {
    static const std::string t = json::parse(read_file(kDir + "tokenizer_config.json")).at("chat_template");
    return t;
}

std::vector<int32_t> encode(const std::string& text) { return qwen3_tokenizer().encode(text, false); }

int32_t token_id(const std::string& token) { return qwen3_tokenizer().token_to_id(token).value(); }

std::vector<SseEvent> parse_sse(const std::string& body) {
    std::vector<SseEvent> out;
    size_t pos = 0;
    while (pos < body.size()) {
        size_t end = body.find("\n\n", pos);
        if (end == std::string::npos) end = body.size();
        SseEvent ev;
        std::istringstream block(body.substr(pos, end - pos));
        for (std::string line; std::getline(block, line);) {
            if (line.rfind("event: ", 0) == 0)
                ev.event = line.substr(7);
            else if (line.rfind("data: ", 0) == 0)
                ev.data += line.substr(6);
        }
        if (!ev.data.empty() || !ev.event.empty()) out.push_back(ev);
        pos = end + 2;
    }
    return out;
}

std::map<int, std::string> chat_stream_text(const std::string& body) {
    std::map<int, std::string> text;
    for (const auto& ev : parse_sse(body)) {
        if (ev.data == "[DONE]") continue;
        const json j = json::parse(ev.data);
        for (const auto& c : j.value("choices", json::array())) {
            const auto& d = c.at("delta");
            if (d.contains("content") && d["content"].is_string()) text[c.at("index").get<int>()] += d["content"].get<std::string>();
        }
    }
    return text;
}

FakeGenerationService::Settings ApiServer::default_settings() {
    FakeGenerationService::Settings s;
    s.script = encode("Hello world! How are you today?");
    return s;
}

ApiServer::ApiServer(FakeGenerationService::Settings settings, HttpOptions http, const text::Tokenizer& tokenizer,
                     std::function<void(ApiContext&)> configure)
    : service(std::move(settings)), server(std::move(http)) {
    ctx.tokenizer = &tokenizer;
    ctx.chat_template = qwen3_chat_template();
    ctx.eos_token = "<|im_end|>";
    ctx.model_name = "fake-model";
    ctx.service = &service;
    ctx.default_max_tokens = 256;
    if (configure) configure(ctx);
    register_api_routes(server, ctx);
}

Answer ApiServer::post(const std::string& target, const std::string& body, const std::map<std::string, std::string>& headers) {
    return call(http::verb::post, target, body, headers);
}

Answer ApiServer::get(const std::string& target, const std::map<std::string, std::string>& headers) {
    return call(http::verb::get, target, "", headers);
}

Answer ApiServer::call(http::verb verb, const std::string& target, const std::string& body,
                       const std::map<std::string, std::string>& headers) {
    Request req{verb, target, 11};
    req.set(http::field::content_type, "application/json");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    Reply reply = server.handle(req);
    Answer a;
    auto fill = [&](const Response& res) {
        a.status = static_cast<int>(res.result_int());
        for (const auto& f : res) a.headers[std::string(f.name_string())] = std::string(f.value());
        a.body += res.body();
    };
    if (reply.kind == Reply::Kind::Immediate) {
        fill(reply.response);
        return a;
    }
    a.finished = reply.writer->wait_finished(std::chrono::seconds(20));
    StreamWriter::Pending p = reply.writer->take();
    if (reply.kind == Reply::Kind::Deferred) {
        if (p.response) fill(*p.response);
        return a;
    }
    fill(reply.response);
    a.body += p.body;
    return a;
}

}  // namespace api_test
