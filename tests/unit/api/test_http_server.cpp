// HttpServer through real sockets on 127.0.0.1 (ephemeral port): keep-alive, SSE streaming,
// disconnects cancelling generations, API keys, limits, timeouts, concurrency; and issue 32's
// hostile shapes: keys checked before the body, admin keys, the connection cap and accept
// back-off, smuggling framings, Host on a keyless loopback server, pipelined bytes and disconnects.
#include <catch2/catch.hpp>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <filesystem>
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
    explicit LiveServer(FakeGenerationService::Settings settings = ApiServer::default_settings(), HttpOptions http = {},
                        const std::function<void(HttpServer&)>& routes = {})
        : api(std::move(settings), with_ephemeral_port(std::move(http))) {
        api.server.route(http::verb::get, "/health",
                         [](const Request& r) { return json_response(r, http::status::ok, R"({"status":"ok"})"); });
        if (routes) routes(api.server);
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
    // What comes within `within`, stopping early once the server closes; `closed` says whether it did.
    std::string read_for(std::chrono::milliseconds within, bool* closed = nullptr) {
        std::string out(static_cast<const char*>(buffer_.data().data()), buffer_.size());
        buffer_.consume(buffer_.size());
        const auto end = std::chrono::steady_clock::now() + within;
        bool eof = false;
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
            if (left.count() <= 0) break;
            pollfd p{socket_.native_handle(), POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
            char chunk[4096];
            const ssize_t n = ::recv(socket_.native_handle(), chunk, sizeof chunk, 0);
            if (n <= 0) {
                eof = true;
                break;
            }
            out.append(chunk, static_cast<size_t>(n));
        }
        if (closed) *closed = eof;
        return out;
    }
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

std::string http_chunk(const std::string& body) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", body.size());
    return size + body + "\r\n0\r\n\r\n";
}

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
                const bool ok =
                    res.result_int() == 200 && (i % 2 == 0 ? chat_stream_text(res.body())[0] == kScript
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
    c.write_raw(
        "POST /tokenize HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n");
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
    c.write_raw("POST /v1/chat/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                "\r\n\r\n" + body);
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

// ---- Issue 32: hostile input ----------------------------------------------------------------

namespace {

std::string raw_post(const std::string& target, const std::string& extra_headers, size_t content_length) {
    return "POST " + target + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" + extra_headers +
           "Content-Length: " + std::to_string(content_length) + "\r\n\r\n";
}

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

// Mutation seen failing: the `server.denied(h)` check in Session::on_header removed (the key
// checked after the body, as before): the 8 MB request got no answer in the 2 s waited, and the
// 100-continue one no 401.
TEST_CASE("api http: a keyless request gets its 401 from the header, its body never read", "[api][http][abuse]") {
    HttpOptions opts;
    opts.api_keys = {"sekret"};
    opts.idle_timeout_s = 3;
    LiveServer srv(ApiServer::default_settings(), opts);
    const std::string body = json{{"content", "Hello world"}}.dump();
    for (const std::string& auth : {std::string(), std::string("Authorization: Bearer wrong\r\n")}) {
        Client c(srv.port());
        const auto t0 = std::chrono::steady_clock::now();
        c.write_raw(raw_post("/tokenize", auth, 8'000'000));  // the header only: the body never comes
        bool closed = false;
        const std::string answer = c.read_for(std::chrono::seconds(2), &closed);
        CHECK(answer.rfind("HTTP/1.1 401", 0) == 0);
        CHECK(answer.find("Connection: close") != std::string::npos);
        CHECK(closed);  // the unread body cannot be skipped: the connection ends
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    }
    {  // Expect: 100-continue gets the 401, not the go-ahead
        Client c(srv.port());
        c.write_raw(raw_post("/tokenize", "Expect: 100-continue\r\n", body.size()));
        CHECK(c.read_for(std::chrono::seconds(2)).rfind("HTTP/1.1 401", 0) == 0);
    }
    {  // a keyless request without a body keeps its connection; the key then works on it
        Client c(srv.port());
        CHECK(c.send(http::verb::get, "/v1/models").result_int() == 401);
        CHECK(c.send(http::verb::post, "/tokenize", body, {{"x-api-key", "sekret"}}).result_int() == 200);
    }
    {  // with the key: the body is read, and the body limit (8 MiB) still holds
        Client c(srv.port());
        auto ok = c.send(http::verb::post, "/tokenize", body, {{"Authorization", "Bearer sekret"}});
        CHECK(ok.result_int() == 200);
        CHECK(json::parse(ok.body())["tokens"] == encode("Hello world"));
        c.write_raw(raw_post("/tokenize", "Authorization: Bearer sekret\r\n", 9 * 1024 * 1024));
        CHECK(c.read_for(std::chrono::seconds(2)).rfind("HTTP/1.1 413", 0) == 0);
    }
}

// Mutation seen failing: denied() back to asking for the API key first on /admin/ (as before,
// when the API key and the admin key were both needed): "the admin key alone" got 401.
TEST_CASE("api http: the admin key alone opens /admin/, and nothing else does", "[api][http][abuse]") {
    auto admin_route = [](HttpServer& s) {
        s.route(http::verb::post, "/admin/ranks/0/restart",
                [](const Request& r) { return json_response(r, http::status::accepted, R"({"status":"restarting"})"); });
    };
    HttpOptions opts;
    opts.api_keys = {"api-key"};
    opts.admin_keys = {"admin-key"};
    LiveServer srv(ApiServer::default_settings(), opts, admin_route);
    Client c(srv.port());
    auto admin = [&](const std::map<std::string, std::string>& h) {
        return c.send(http::verb::post, "/admin/ranks/0/restart", "", h).result_int();
    };
    CHECK(admin({{"Authorization", "Bearer admin-key"}}) == 202);
    CHECK(admin({{"Authorization", "bearer  admin-key "}}) == 202);  // the scheme's case and spaces do not matter
    CHECK(admin({{"x-api-key", "admin-key"}}) == 202);
    CHECK(admin({{"Authorization", "Bearer admin-key"}, {"x-api-key", "api-key"}}) == 202);
    CHECK(admin({{"Authorization", "Bearer api-key"}}) == 401);  // the API key is not an admin key
    CHECK(admin({{"Authorization", "Bearer admin-ke"}}) == 401);
    CHECK(admin({{"Authorization", "Bearer admin-key2"}}) == 401);
    CHECK(admin({}) == 401);
    CHECK(c.send(http::verb::get, "/v1/models", "", {{"Authorization", "Bearer admin-key"}}).result_int() == 401);
    CHECK(c.send(http::verb::get, "/v1/models", "", {{"Authorization", "Bearer api-key"}}).result_int() == 200);

    LiveServer no_admin(ApiServer::default_settings(), HttpOptions{}, admin_route);  // no admin key: closed
    Client c2(no_admin.port());
    auto res = c2.send(http::verb::post, "/admin/ranks/0/restart", "", {{"Authorization", "Bearer "}});
    CHECK(res.result_int() == 401);
    CHECK(json::parse(res.body())["error"]["message"].get<std::string>().find("--admin-key") != std::string::npos);
}

// Mutations seen failing: keys_equal as `given == key` (a mismatch at byte 0 took 1/700 of the time
// of one at the last byte), and with the old early `return false` on different lengths (1/100000).
TEST_CASE("api http: keys compare in time that depends on the given key's length only", "[api][http][abuse]") {
    CHECK(keys_equal("sekret", "sekret"));
    CHECK_FALSE(keys_equal("sekre", "sekret"));
    CHECK_FALSE(keys_equal("sekret2", "sekret"));
    CHECK_FALSE(keys_equal("sekretsekret", "sekret"));  // the key cycled under a longer one must not match
    CHECK_FALSE(keys_equal("Sekret", "sekret"));
    CHECK_FALSE(keys_equal("", "sekret"));
    CHECK_FALSE(keys_equal("x", ""));
    const size_t n = 1 << 20;
    const std::string key(n, 'k');
    std::string first = key, last = key;
    first.front() = 'x';
    last.back() = 'x';
    const std::string longer = key + "k";  // the key plus a byte: given is the shorter one
    auto median_time = [&](const std::string& given, const std::string& k) {
        std::vector<double> t;
        for (int i = 0; i < 15; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            volatile bool r = keys_equal(given, k);
            (void)r;
            t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };
    const double at_last = median_time(last, key);
    const double at_first = median_time(first, key);
    const double other_length = median_time(key, longer);
    INFO("mismatch at the last byte " << at_last << " s, at the first " << at_first << " s, other length " << other_length << " s");
    CHECK(at_first > 0.3 * at_last);
    CHECK(other_length > 0.3 * at_last);
}

// Mutation seen failing: the `sessions.load() >= opts.max_connections` check in accept() removed:
// the third connection got no 503 (it waited to be served).
TEST_CASE("api http: connections past --max-connections get a 503 at once", "[api][http][abuse]") {
    HttpOptions opts;
    opts.max_connections = 2;
    LiveServer srv(ApiServer::default_settings(), opts);
    auto a = std::make_unique<Client>(srv.port());
    Client b(srv.port());
    CHECK(a->send(http::verb::get, "/health").result_int() == 200);
    CHECK(b.send(http::verb::get, "/health").result_int() == 200);
    {
        Client over(srv.port());  // reads first: nothing to send, nothing left unread on refusal
        bool closed = false;
        const std::string answer = over.read_for(std::chrono::seconds(2), &closed);
        CHECK(answer.rfind("HTTP/1.1 503", 0) == 0);
        CHECK(answer.find("Retry-After: 1") != std::string::npos);
        CHECK(closed);
    }
    a->close();
    a.reset();
    CHECK(eventually([&] {  // a slot is free again once the server saw the close
        Client again(srv.port());
        try {
            return again.send(http::verb::get, "/health").result_int() == 200;
        } catch (const std::exception&) {
            return false;
        }
    }));
}

// Mutation seen failing: on_accept_error calling accept() at once for every error (no back-off):
// the io thread spun on EMFILE, ~1 s of CPU in the 1 s watched.
TEST_CASE("api http: out of descriptors the accept loop backs off, then serves again", "[api][http][abuse]") {
    LiveServer srv;
    rlimit saved{};
    REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
    // Every descriptor taken (dups of stdin under a lowered limit) but one, which the client's
    // socket takes: the server's accept then fails with EMFILE.
    int top = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) top = std::max(top, std::stoi(e.path().filename()));
    rlimit low = saved;
    low.rlim_cur = static_cast<rlim_t>(top + 16);
    REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
    std::vector<int> filler;
    for (int fd; (fd = ::dup(0)) >= 0;) filler.push_back(fd);
    REQUIRE(!filler.empty());
    ::close(filler.back());
    filler.pop_back();
    auto restore = [&] {
        for (int fd : filler) ::close(fd);
        filler.clear();
        setrlimit(RLIMIT_NOFILE, &saved);
    };
    // A bare socket: a Client's io_context would need descriptors of its own.
    const int c = ::socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0) restore();
    REQUIRE(c >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(srv.port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);  // the kernel queues it
    const std::string req = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n";
    REQUIRE(::send(c, req.data(), req.size(), 0) == static_cast<ssize_t>(req.size()));
    auto answer_within = [c](int ms) {
        pollfd p{c, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0) return std::string();
        char buf[4096];
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
    };
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double cpu0 = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double spent = cpu_seconds() - cpu0;
    const std::string before = answer_within(0);
    restore();
    INFO("CPU while out of descriptors: " << spent << " s in 1 s");
    CHECK(before.empty());                                     // not served while no descriptor was free...
    CHECK(spent < 0.3);                                        // ...and not spinning either
    CHECK(answer_within(2000).rfind("HTTP/1.1 200", 0) == 0);  // then served
    ::close(c);
    Client fresh(srv.port());
    CHECK(fresh.send(http::verb::get, "/health").result_int() == 200);
}

// Mutation seen failing: the framing_problem() check in on_header removed: "chunked, gzip" with a
// Content-Length was framed by the length and answered 200; without one, the body was read as the
// next request.
TEST_CASE("api http: smuggling framings get 400 and the connection closes", "[api][http][abuse]") {
    LiveServer srv;
    const std::string body = json{{"content", "Hello world"}}.dump();
    auto answer_to = [&](const std::string& head, const std::string& rest) {
        Client c(srv.port());
        c.write_raw("POST /tokenize HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" + head + "\r\n" + rest);
        bool closed = false;
        std::string a = c.read_for(std::chrono::seconds(2), &closed);
        CHECK(closed);
        return a;
    };
    const std::string cl = "Content-Length: " + std::to_string(body.size()) + "\r\n";
    const std::string chunked_body = http_chunk(body);
    std::string a = answer_to("Transfer-Encoding: chunked, gzip\r\n" + cl, body);
    CHECK(a.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(a.find("Transfer-Encoding and Content-Length") != std::string::npos);
    CHECK(answer_to(cl + "Transfer-Encoding: chunked\r\n", chunked_body).rfind("HTTP/1.1 400", 0) == 0);
    CHECK(answer_to("Transfer-Encoding: chunked\r\n" + cl, chunked_body).rfind("HTTP/1.1 400", 0) == 0);
    a = answer_to("Transfer-Encoding: chunked, gzip\r\n", body);
    CHECK(a.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(a.find("final transfer coding must be chunked") != std::string::npos);
    CHECK(answer_to("Transfer-Encoding: gzip\r\n", body).rfind("HTTP/1.1 400", 0) == 0);
    CHECK(answer_to("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", chunked_body).rfind("HTTP/1.1 400", 0) == 0);
    CHECK(answer_to("Transfer-Encoding: gzip, chunked\r\n", chunked_body).rfind("HTTP/1.1 501", 0) == 0);
    // Sound framings still work, the connection kept.
    Client c(srv.port());
    c.write_raw("POST /tokenize HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked_body);
    CHECK(json::parse(c.read().body())["tokens"] == encode("Hello world"));
    CHECK(c.send(http::verb::post, "/tokenize", body).result_int() == 200);
}

// Mutation seen failing: host_guard forced false in run(): the foreign names were answered 200.
TEST_CASE("api http: a keyless loopback server answers only loopback Host names", "[api][http][abuse]") {
    LiveServer srv;
    auto status_for = [&](const std::string& host) {
        Client c(srv.port());
        c.write_raw("GET /health HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
        const std::string a = c.read_for(std::chrono::seconds(2));
        return a.size() > 12 ? std::stoi(a.substr(9, 3)) : 0;
    };
    for (const char* ok : {"localhost", "localhost:8080", "LocalHost.", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:8080"})
        CHECK(status_for(ok) == 200);
    for (const char* bad : {"evil.example", "evil.example:8080", "localhost.evil.example", "127.0.0.1.nip.io", "localhost:80x", "[::2]",
                            "0.0.0.0", "localhost@evil.example"})
        CHECK(status_for(bad) == 421);
    // The HTTP/1.0 stream test above sends no Host at all and is served.
    HttpOptions keyed;
    keyed.api_keys = {"sekret"};
    LiveServer with_key(ApiServer::default_settings(), keyed);
    Client c(with_key.port());
    c.write_raw("GET /v1/models HTTP/1.1\r\nHost: radiance.example.com\r\nAuthorization: Bearer sekret\r\n\r\n");
    CHECK(c.read().result_int() == 200);  // with a key, Host is not checked
}

// Mutation seen failing: on_watch back to stopping the watch when bytes came (no `watch()` again):
// the generation went on after the client left, active() stayed 1 past the 5 s waited.
TEST_CASE("api http: a client that sends more bytes and leaves still cancels its whole answer", "[api][http][abuse]") {
    LiveServer srv(slow_settings());
    {
        Client c(srv.port());
        c.write(http::verb::post, "/v1/completions", json{{"prompt", "x"}, {"n", 2}, {"ignore_eos", true}, {"max_tokens", 1000}}.dump());
        REQUIRE(eventually([&] { return srv.api.service.active() == 2; }));
        c.write_raw("X");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        c.close();
        CHECK(eventually([&] { return srv.api.service.active() == 0; }));
        CHECK(srv.api.service.cancelled().size() == 2);
    }
    {  // a pipelined request that comes while a whole answer is pending is answered after it
        Client c(srv.port());
        c.write(http::verb::post, "/v1/completions", json{{"prompt", "x"}, {"max_tokens", 10}, {"ignore_eos", true}}.dump());
        REQUIRE(eventually([&] { return srv.api.service.active() == 1; }));
        c.write_raw("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n");
        CHECK(c.read().result_int() == 200);
        CHECK(json::parse(c.read().body())["status"] == "ok");
    }
    {  // past the header limit, pipelined bytes are dropped and the connection closes after the answer
        Client c(srv.port());
        c.write(http::verb::post, "/v1/completions", json{{"prompt", "x"}, {"max_tokens", 10}, {"ignore_eos", true}}.dump());
        REQUIRE(eventually([&] { return srv.api.service.active() == 1; }));
        c.write_raw(std::string(100 * 1024, 'X'));
        auto res = c.read();
        CHECK(res.result_int() == 200);
        CHECK_FALSE(res.keep_alive());
        CHECK(c.closed_by_server());
    }
}

// Every final answer is reported once with its route (or "other") and status, the server's own
// refusals included: radiance:http_requests_total{endpoint,code} counts these (it had no caller
// and stayed empty). Mutation run: the send_final() call removed fails all but the stream row.
TEST_CASE("api http: every answer is reported by endpoint and status", "[api][http]") {
    std::mutex mu;
    std::vector<std::pair<std::string, int>> seen;
    HttpOptions opts;
    opts.api_keys = {"k"};
    opts.on_answer = [&](const std::string& endpoint, int status) {
        std::lock_guard<std::mutex> lk(mu);
        seen.push_back({endpoint, status});
    };
    LiveServer srv(ApiServer::default_settings(), opts);
    Client c(srv.port());
    const std::map<std::string, std::string> key = {{"Authorization", "Bearer k"}};
    CHECK(c.send(http::verb::get, "/health").result_int() == 200);
    CHECK(c.send(http::verb::get, "/v1/models", "", key).result_int() == 200);
    CHECK(c.send(http::verb::get, "/no/such/path?x=1", "", key).result_int() == 404);
    CHECK(c.send(http::verb::post, "/v1/completions", json{{"prompt", "Hi"}, {"max_tokens", 2}}.dump()).result_int() == 401);
    Client d(srv.port());
    CHECK(
        d.send(http::verb::post, "/v1/completions", json{{"prompt", "Hi"}, {"max_tokens", 2}, {"stream", true}}.dump(), key).result_int() ==
        200);
    std::lock_guard<std::mutex> lk(mu);
    const std::vector<std::pair<std::string, int>> want = {
        {"/health", 200}, {"/v1/models", 200}, {"other", 404}, {"/v1/completions", 401}, {"/v1/completions", 200}};
    CHECK(seen == want);
}
