// http_server.h: HTTP/1.1 on Boost.Beast: keep-alive, a body limit, many connections on a few
// threads. Handlers see a parsed request and return a Reply: a whole Response at once, or a
// StreamWriter that produces the body (Server-Sent Events) or the whole response later, from any
// thread, so no io thread waits for a model. Routing is by method and exact path.
#pragma once
#include <boost/beast/http.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace radiance::frontend {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

struct HttpOptions {
    std::string host = "127.0.0.1";
    unsigned short port = 8080;
    int threads = 2;
    size_t body_limit = 8 * 1024 * 1024;  // 413 past this
    size_t header_limit = 64 * 1024;      // 431 past this
    int idle_timeout_s = 120;             // reading a request, or a client not reading what we write
    int request_timeout_s = 600;          // a deferred or streamed reply: 504 or the stream cut past this
    // Connections past this many are answered 503 and closed at once (none of them read).
    int max_connections = 1024;
    // When not empty, every path but open_paths and admin_prefix's needs `Authorization: Bearer KEY`
    // or `x-api-key: KEY`.
    std::vector<std::string> api_keys;
    // Probes, and /metrics: Prometheus scrapes it without the clients' key, and it carries no
    // request content (vLLM leaves it open under --api-key too).
    std::vector<std::string> open_paths = {"/health", "/ready", "/startup", "/metrics"};
    // Paths under admin_prefix need one of admin_keys (an API key does not do), and are refused
    // (401) when there is none.
    std::vector<std::string> admin_keys;
    std::string admin_prefix = "/admin/";
    // A server without api_keys bound to a loopback address answers 421 to a request whose Host is
    // not localhost, 127.0.0.1, [::1] or the bound address (any port): a web page cannot reach it
    // through a DNS name rebound to 127.0.0.1. Nothing is checked with a key or on other addresses.
    bool check_host = true;
    // Told of every final answer (a stream's at its head): the route's path, or "other" for a path
    // no route serves (so a scanner cannot grow a label set), and the status. Runs on an io thread.
    std::function<void(const std::string& endpoint, int status)> on_answer;
};

// Equal strings, in time that depends on `given`'s length only: every byte of it is compared (the
// key cycled under it) and a length mismatch is folded in, not returned early; so neither a key's
// bytes nor its length can be learnt by timing.
bool keys_equal(std::string_view given, std::string_view key);
// An IP address literal that is a loopback one (127.0.0.0/8, ::1); false for anything else.
bool is_loopback_address(const std::string& host);

// A JSON response with the right headers.
Response json_response(const Request& req, http::status status, const std::string& body);
// An OpenAI-style error: {"error": {"message", "type", "param", "code"}}; `code` is the HTTP
// status number unless one is given.
Response error_response(const Request& req, http::status status, const std::string& message, const std::string& type,
                        const std::string& param = "", const std::string& code = "");
// The status line and headers of a streamed reply (the body comes from a StreamWriter).
Response stream_head(const Request& req, http::status status, const std::string& content_type);

// The channel between a handler's worker (any thread) and the connection. Thread-safe; nothing
// in it blocks on the network: chunks queue in memory and the connection's thread sends them.
class StreamWriter {
public:
    // Streamed replies: queue a body chunk. False (and the chunk dropped) once closed or the
    // client is gone.
    bool write(std::string chunk);
    // Ends a streamed body. Idempotent.
    void close();
    // Deferred replies: the whole response, once (version and keep-alive come from the request).
    void respond(Response res);
    // The client closed the connection, a write failed, or the request timed out.
    bool client_gone() const;
    // Runs `cb` once if the client goes before the reply is finished (at once, on this thread,
    // when it already has). Dropped unrun once close()/respond() is called: that also breaks the
    // reference cycles callbacks tend to hold.
    void on_client_gone(std::function<void()> cb);

    // ---- The transport side: the server, or code running handlers in-process (tests). ----
    struct Pending {
        std::string body;                  // chunks queued since the last take()
        bool closed = false;               // close() was called
        std::optional<Response> response;  // respond()'s response, handed out once
    };
    Pending take();
    // Called (from the writing thread) whenever something is queued; at once if something is.
    void set_wakeup(std::function<void()> wakeup);
    void mark_client_gone();
    // Blocks until closed, responded or gone, at most `timeout`; false on timeout.
    bool wait_finished(std::chrono::milliseconds timeout) const;

private:
    void wake();

    mutable std::mutex mu_;
    mutable std::condition_variable finished_cv_;
    std::string body_;
    bool closed_ = false;
    bool responded_ = false;
    std::optional<Response> response_;
    bool gone_ = false;
    std::vector<std::function<void()>> on_gone_;
    std::mutex wake_mu_;  // separate, so wake() can run outside mu_ yet never after set_wakeup({})
    std::function<void()> wakeup_;
};

// What a handler returns. A plain Response converts implicitly, so handlers written as
// `Response(const Request&)` keep working.
struct Reply {
    enum class Kind { Immediate, Stream, Deferred };
    Reply(Response res) : kind(Kind::Immediate), response(std::move(res)) {}  // NOLINT(google-explicit-constructor)
    // A streamed body: `head` gives the status and headers (its body is ignored).
    static Reply stream(Response head, std::shared_ptr<StreamWriter> writer);
    // The whole response comes later, through writer->respond().
    static Reply deferred(std::shared_ptr<StreamWriter> writer);

    Kind kind;
    Response response;
    std::shared_ptr<StreamWriter> writer;
};

using Handler = std::function<Reply(const Request&)>;
// Shapes the server's own errors (400, 401, 404, 405, 413, 421, 431, 500, 501, 504); the API layer installs
// one that answers Anthropic routes in Anthropic's shape.
using ErrorFormatter = std::function<Response(const Request&, http::status, const std::string& message, const std::string& type)>;

class HttpServer {
public:
    explicit HttpServer(HttpOptions opts);
    ~HttpServer();
    // `path` is exact, or ends in "{id}": then it serves every path under that prefix with a
    // non-empty rest (a model id may hold '/'); the handler reads the rest from the target.
    void route(http::verb method, const std::string& path, Handler h);
    void set_error_formatter(ErrorFormatter f);
    // API-key check, routing and the handler, without a socket (what a connection does per request).
    Reply handle(const Request& req) const;
    // Binds the address (once); throws radiance::Error if it cannot be bound.
    void listen();
    // Binds if listen() was not called, and serves until stop().
    void run();
    // Stops accepting; replies already under way get up to `grace` to be written to their end
    // (a stream's last event and its terminating chunk), then every connection is dropped.
    void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(0));
    // Deferred and streamed replies not yet written to their end.
    int pending_replies() const;
    unsigned short bound_port() const;
    const HttpOptions& options() const;

private:
    struct Impl;
    struct Session;
    std::unique_ptr<Impl> impl_;
};

}  // namespace radiance::frontend
