// HttpServer through real sockets on 127.0.0.1 (ephemeral port): keep-alive, SSE streaming,
// disconnects cancelling generations, API keys, limits, timeouts, concurrency.
#include <catch2/catch.hpp>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>

#include <thread>

#include "api_test_util.h"

using namespace api_test;
using namespace radiance::frontend;
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

class LiveServer {
public:
    explicit LiveServer(FakeGenerationService::Settings settings = ApiServer::default_settings(), HttpOptions http = {})
        : api(std::move(settings), with_ephemeral_port(std::move(http))) {
        api.server.route(http::verb::get, "/health",
                         [](const Request& r) { return json_response(r, http::status::ok, R"({"status":"ok"})"); });
        thread_ = std::thread([this] { api.server.run(); });
        for (int i = 0; i < 500 && api.server.bound_port() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        REQUIRE(api.server.bound_port() != 0);
    }
    ~LiveServer() {
        api.server.stop();
        thread_.join();
    }
    unsigned short port() const { return api.server.bound_port(); }

    ApiServer api;

private:
    static HttpOptions with_ephemeral_port(HttpOptions o) {
        o.port = 0;
        return o;
    }
    std::thread thread_;
};

// One connection, kept alive across requests.
class Client {
public:
    explicit Client(unsigned short port) : socket_(ioc_) { socket_.connect({asio::ip::make_address("127.0.0.1"), port}); }

    http::response<http::string_body> send(http::verb verb, const std::string& target, const std::string& body = "",
                                           const std::map<std::string, std::string>& headers = {}) {
        write(verb, target, body, headers);
        return read();
    }
    void write(http::verb verb, const std::string& target, const std::string& body = "",
               const std::map<std::string, std::string>& headers = {}) {
        Request req{verb, target, 11};
        req.set(http::field::host, "127.0.0.1");
        for (const auto& [k, v] : headers) req.set(k, v);
        req.body() = body;
        req.prepare_payload();
        http::write(socket_, req);
    }
    http::response<http::string_body> read() {
        http::response<http::string_body> res;
        http::read(socket_, buffer_, res);
        return res;
    }
    void write_raw(const std::string& bytes) { asio::write(socket_, asio::buffer(bytes)); }
    // Everything until the server closes the connection.
    std::string read_to_end() {
        std::string out(static_cast<const char*>(buffer_.data().data()), buffer_.size());
        buffer_.consume(buffer_.size());
        beast::error_code ec;
        char chunk[4096];
        for (;;) {
            size_t n = socket_.read_some(asio::buffer(chunk), ec);
            if (ec) break;
            out.append(chunk, n);
        }
        return out;
    }
    // Reads until `needle` shows up (or the connection ends).
    std::string read_until(const std::string& needle) {
        std::string out;
        beast::error_code ec;
        char chunk[4096];
        while (out.find(needle) == std::string::npos) {
            size_t n = socket_.read_some(asio::buffer(chunk), ec);
            if (ec) break;
            out.append(chunk, n);
        }
        return out;
    }
    bool closed_by_server() {
        beast::error_code ec;
        char c;
        socket_.read_some(asio::buffer(&c, 1), ec);
        return ec == asio::error::eof || ec == asio::error::connection_reset;
    }
    void close() {
        beast::error_code ec;
        socket_.shutdown(tcp::socket::shutdown_both, ec);
        socket_.close(ec);
    }

private:
    asio::io_context ioc_;
    tcp::socket socket_;
    beast::flat_buffer buffer_;
};

json chat(json extra = json::object()) {
    json b = {{"model", "fake-model"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
    b.update(extra);
    return b;
}

// A generation that lasts: one token every 20 ms, up to a thousand of them.
FakeGenerationService::Settings slow_settings() {
    auto s = ApiServer::default_settings();
    s.tokens_per_call = 1;
    s.tick = std::chrono::milliseconds(20);
    return s;
}

bool eventually(const std::function<bool()>& f, std::chrono::milliseconds within = std::chrono::seconds(5)) {
    const auto end = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < end) {
        if (f()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return f();
}

const std::string kScript = "Hello world! How are you today?";

}  // namespace

TEST_CASE("api http: keep-alive across plain, deferred and streamed replies", "[api][http]") {
    LiveServer srv;
    Client c(srv.port());
    auto health = c.send(http::verb::get, "/health");
    CHECK(health.result_int() == 200);
    auto plain = c.send(http::verb::post, "/v1/chat/completions", chat().dump());
    REQUIRE(plain.result_int() == 200);
    CHECK(json::parse(plain.body())["choices"][0]["message"]["content"] == kScript);
    auto stream = c.send(http::verb::post, "/v1/chat/completions", chat({{"stream", true}}).dump());
    REQUIRE(stream.result_int() == 200);
    CHECK(stream[http::field::transfer_encoding] == "chunked");
    CHECK(chat_stream_text(stream.body())[0] == kScript);
    CHECK(stream.body().substr(stream.body().size() - 14) == "data: [DONE]\n\n");
    auto tokens = c.send(http::verb::post, "/tokenize", json{{"content", "Hello world"}}.dump());
    CHECK(json::parse(tokens.body())["tokens"] == encode("Hello world"));
    auto again = c.send(http::verb::post, "/v1/messages",
                        json{{"max_tokens", 5}, {"messages", {{{"role", "user"}, {"content", "x"}}}}, {"stream", true}}.dump());
    CHECK(again.result_int() == 200);
    CHECK(again.body().find("event: message_stop") != std::string::npos);
}

TEST_CASE("api http: a client that disconnects mid-stream cancels its generation", "[api][http]") {
    LiveServer srv(slow_settings());
    Client c(srv.port());
    c.write(http::verb::post, "/v1/chat/completions", chat({{"stream", true}, {"ignore_eos", true}, {"max_tokens", 1000}}).dump());
    const std::string start = c.read_until("\"content\":\"Hello\"");
    CHECK(start.find("200 OK") != std::string::npos);
    REQUIRE(srv.api.service.active() == 1);
    c.close();
    CHECK(eventually([&] { return srv.api.service.active() == 0; }));
    CHECK(srv.api.service.cancelled().size() == 1);
}

TEST_CASE("api http: a client that disconnects while waiting for a whole answer cancels it", "[api][http]") {
    LiveServer srv(slow_settings());
    Client c(srv.port());
    c.write(http::verb::post, "/v1/completions", json{{"prompt", "x"}, {"n", 3}, {"ignore_eos", true}, {"max_tokens", 1000}}.dump());
    REQUIRE(eventually([&] { return srv.api.service.active() == 3; }));
    c.close();
    CHECK(eventually([&] { return srv.api.service.active() == 0; }));
    CHECK(srv.api.service.cancelled().size() == 3);
}

TEST_CASE("api http: API keys guard everything but the probes and /metrics", "[api][http]") {
    HttpOptions opts;
    opts.api_keys = {"sekret", "other"};
    LiveServer srv(ApiServer::default_settings(), opts);
    Client c(srv.port());
    CHECK(c.send(http::verb::get, "/health").result_int() == 200);
    CHECK(c.send(http::verb::get, "/metrics").result_int() != 401);  // no route here (404), but never 401
    auto denied = c.send(http::verb::get, "/v1/models");
    CHECK(denied.result_int() == 401);
    CHECK(denied[http::field::www_authenticate] == "Bearer");
    CHECK(json::parse(denied.body())["error"]["type"] == "authentication_error");
    CHECK(c.send(http::verb::get, "/v1/models", "", {{"Authorization", "Bearer sekret"}}).result_int() == 200);
    CHECK(c.send(http::verb::get, "/v1/models", "", {{"Authorization", "bearer other"}}).result_int() == 200);
    CHECK(c.send(http::verb::get, "/v1/models", "", {{"x-api-key", "sekret"}}).result_int() == 200);
    CHECK(c.send(http::verb::get, "/v1/models", "", {{"Authorization", "Bearer sekre"}}).result_int() == 401);
    CHECK(c.send(http::verb::get, "/v1/models", "", {{"x-api-key", "sekret2"}}).result_int() == 401);
    auto anthropic = c.send(http::verb::post, "/v1/messages", "{}");
    CHECK(anthropic.result_int() == 401);
    CHECK(json::parse(anthropic.body())["type"] == "error");
    CHECK(json::parse(anthropic.body())["error"]["type"] == "authentication_error");
}

TEST_CASE("api http: a body over the limit gets 413 and the connection closes", "[api][http]") {
    HttpOptions opts;
    opts.body_limit = 2000;
    LiveServer srv(ApiServer::default_settings(), opts);
    Client c(srv.port());
    auto res = c.send(http::verb::post, "/v1/completions", json{{"prompt", std::string(5000, 'x')}}.dump());
    CHECK(res.result_int() == 413);
    CHECK(json::parse(res.body())["error"]["message"].get<std::string>().find("2000") != std::string::npos);
    CHECK(c.closed_by_server());
}

TEST_CASE("api http: a request over its time gets 504 and its generation is cancelled", "[api][http]") {
    HttpOptions opts;
    opts.request_timeout_s = 1;
    LiveServer srv(slow_settings(), opts);
    Client c(srv.port());
    const auto t0 = std::chrono::steady_clock::now();
    auto res = c.send(http::verb::post, "/v1/chat/completions", chat({{"ignore_eos", true}, {"max_tokens", 1000}}).dump());
    CHECK(res.result_int() == 504);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    CHECK(eventually([&] { return srv.api.service.active() == 0; }));
    CHECK(srv.api.service.cancelled().size() == 1);
}

TEST_CASE("api http: many concurrent streams on two io threads", "[api][http]") {
    auto settings = ApiServer::default_settings();
    settings.tick = std::chrono::milliseconds(1);
    LiveServer srv(settings);
    constexpr int kClients = 24;
    std::vector<std::thread> threads;
    std::atomic<int> good{0};
    for (int i = 0; i < kClients; ++i) {
        threads.emplace_back([&, i] {
            Client c(srv.port());
            for (int k = 0; k < 2; ++k) {
                auto res = c.send(http::verb::post, "/v1/chat/completions", chat({{"stream", i % 2 == 0}}).dump());
                const bool ok = res.result_int() == 200 &&
                                (i % 2 == 0 ? chat_stream_text(res.body())[0] == kScript
                                            : json::parse(res.body())["choices"][0]["message"]["content"] == kScript);
                if (ok) ++good;
            }
        });
    }
    for (auto& t : threads) t.join();
    CHECK(good == 2 * kClients);
}

TEST_CASE("api http: Expect: 100-continue is answered before the body", "[api][http]") {
    LiveServer srv;
    Client c(srv.port());
    const std::string body = json{{"content", "Hello world"}}.dump();
    c.write_raw("POST /tokenize HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n");
    CHECK(c.read_until("\r\n\r\n").rfind("HTTP/1.1 100 Continue", 0) == 0);
    c.write_raw(body);
    auto res = c.read();
    CHECK(res.result_int() == 200);
    CHECK(json::parse(res.body())["tokens"] == encode("Hello world"));
}

TEST_CASE("api http: malformed requests get 400", "[api][http]") {
    LiveServer srv;
    Client c(srv.port());
    c.write_raw("GARBAGE\r\n\r\n");
    const std::string answer = c.read_to_end();
    CHECK(answer.rfind("HTTP/1.1 400", 0) == 0);
}

TEST_CASE("api http: HTTP/1.0 streams end with the connection", "[api][http]") {
    LiveServer srv;
    Client c(srv.port());
    const std::string body = chat({{"stream", true}}).dump();
    c.write_raw("POST /v1/chat/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body);
    const std::string answer = c.read_to_end();
    CHECK(answer.rfind("HTTP/1.0 200", 0) == 0);
    CHECK(answer.find("chunked") == std::string::npos);
    CHECK(answer.substr(answer.size() - 14) == "data: [DONE]\n\n");
    CHECK(chat_stream_text(answer.substr(answer.find("\r\n\r\n") + 4))[0] == kScript);
}

TEST_CASE("api http: pipelined requests, also behind a stream", "[api][http]") {
    LiveServer srv;
    Client c(srv.port());
    const std::string body = chat({{"stream", true}}).dump();
    c.write_raw("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\nPOST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body + "GET /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n");
    CHECK(c.read().result_int() == 200);
    auto stream = c.read();
    CHECK(chat_stream_text(stream.body())[0] == kScript);
    auto models = c.read();
    CHECK(json::parse(models.body())["data"][0]["id"] == "fake-model");
}
