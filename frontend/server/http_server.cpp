#include "http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <array>
#include <atomic>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

// ---------------------------------------------------------------------------------------------
// Responses

Response json_response(const Request& req, http::status status, const std::string& body) {
    Response res{status, req.version()};
    res.set(http::field::server, "radiance");
    res.set(http::field::content_type, "application/json");
    res.keep_alive(req.keep_alive());
    res.body() = body;
    res.prepare_payload();
    return res;
}

Response error_response(const Request& req, http::status status, const std::string& message, const std::string& type,
                        const std::string& param, const std::string& code) {
    nlohmann::json j = {{"error",
                         {{"message", message},
                          {"type", type},
                          {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
                          {"code", code.empty() ? nlohmann::json(static_cast<int>(status)) : nlohmann::json(code)}}}};
    // Messages may quote request text: never let invalid UTF-8 turn an error into an exception.
    return json_response(req, status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

Response stream_head(const Request& req, http::status status, const std::string& content_type) {
    Response res{status, req.version()};
    res.set(http::field::server, "radiance");
    res.set(http::field::content_type, content_type);
    res.set(http::field::cache_control, "no-cache");
    res.set("X-Accel-Buffering", "no");  // proxies such as nginx would otherwise hold events back
    res.keep_alive(req.keep_alive());
    return res;
}

// ---------------------------------------------------------------------------------------------
// StreamWriter

bool StreamWriter::write(std::string chunk) {
    {
        std::lock_guard lk(mu_);
        if (closed_ || responded_ || gone_) return false;
        body_ += chunk;
    }
    wake();
    return true;
}

void StreamWriter::close() {
    {
        std::lock_guard lk(mu_);
        if (closed_) return;
        closed_ = true;
        on_gone_.clear();
    }
    finished_cv_.notify_all();
    wake();
}

void StreamWriter::respond(Response res) {
    {
        std::lock_guard lk(mu_);
        if (responded_ || closed_) return;
        responded_ = true;
        response_ = std::move(res);
        on_gone_.clear();
    }
    finished_cv_.notify_all();
    wake();
}

bool StreamWriter::client_gone() const {
    std::lock_guard lk(mu_);
    return gone_;
}

void StreamWriter::on_client_gone(std::function<void()> cb) {
    {
        std::lock_guard lk(mu_);
        if (closed_ || responded_) return;
        if (!gone_) {
            on_gone_.push_back(std::move(cb));
            return;
        }
    }
    cb();
}

StreamWriter::Pending StreamWriter::take() {
    std::lock_guard lk(mu_);
    Pending p;
    p.body.swap(body_);
    p.closed = closed_;
    if (response_) {
        p.response = std::move(response_);
        response_.reset();
    }
    return p;
}

void StreamWriter::set_wakeup(std::function<void()> wakeup) {
    bool pending;
    {
        std::lock_guard lk(mu_);
        pending = !body_.empty() || closed_ || response_;
    }
    std::lock_guard lk(wake_mu_);
    wakeup_ = std::move(wakeup);
    if (wakeup_ && pending) wakeup_();
}

void StreamWriter::mark_client_gone() {
    std::vector<std::function<void()>> callbacks;
    {
        std::lock_guard lk(mu_);
        if (gone_) return;
        gone_ = true;
        callbacks.swap(on_gone_);
    }
    finished_cv_.notify_all();
    for (auto& cb : callbacks) cb();  // outside the lock: they may write or cancel
}

bool StreamWriter::wait_finished(std::chrono::milliseconds timeout) const {
    std::unique_lock lk(mu_);
    return finished_cv_.wait_for(lk, timeout, [&] { return closed_ || responded_ || gone_; });
}

void StreamWriter::wake() {
    std::lock_guard lk(wake_mu_);
    if (wakeup_) wakeup_();  // posts to the connection's strand; never runs the write inline
}

Reply Reply::stream(Response head, std::shared_ptr<StreamWriter> writer) {
    Reply r(std::move(head));
    r.kind = Kind::Stream;
    r.writer = std::move(writer);
    return r;
}

Reply Reply::deferred(std::shared_ptr<StreamWriter> writer) {
    Reply r(Response{});
    r.kind = Kind::Deferred;
    r.writer = std::move(writer);
    return r;
}

// ---------------------------------------------------------------------------------------------
// Routing and API keys

namespace {

std::string path_of(const Request& req) {
    std::string path(req.target());
    if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
    return path;
}

// Boost 1.74's Beast has its own string_view.
std::string_view std_view(beast::string_view v) { return {v.data(), v.size()}; }

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

std::string_view bearer_token(std::string_view authorization) {
    constexpr std::string_view scheme = "bearer ";
    if (authorization.size() <= scheme.size() ||
        !beast::iequals(beast::string_view(authorization.data(), scheme.size()), beast::string_view(scheme.data(), scheme.size())))
        return {};
    authorization.remove_prefix(scheme.size());
    while (!authorization.empty() && authorization.front() == ' ') authorization.remove_prefix(1);
    while (!authorization.empty() && authorization.back() == ' ') authorization.remove_suffix(1);
    return authorization;
}

// RFC 9112 6.1 and 6.3: framing that a proxy in front could read differently from us (request
// smuggling) is refused. Empty when the framing is sound.
struct FramingProblem {
    http::status status;
    std::string message;
};
std::optional<FramingProblem> framing_problem(const Request& h) {
    bool te = false;
    std::vector<std::string> codings;
    for (const auto& f : h) {
        if (f.name() != http::field::transfer_encoding) continue;
        te = true;
        for (auto c : http::token_list{f.value()}) codings.push_back(lower(std_view(c)));
    }
    if (!te) return std::nullopt;
    if (h.find(http::field::content_length) != h.end())
        return FramingProblem{http::status::bad_request, "Transfer-Encoding and Content-Length together (RFC 9112 6.1)"};
    if (h.version() < 11) return FramingProblem{http::status::bad_request, "Transfer-Encoding in an HTTP/1.0 request"};
    if (codings.empty() || codings.back() != "chunked")
        return FramingProblem{http::status::bad_request, "the final transfer coding must be chunked (RFC 9112 6.3)"};
    if (codings.size() == 1) return std::nullopt;
    if (std::count(codings.begin(), codings.end(), "chunked") > 1)
        return FramingProblem{http::status::bad_request, "chunked applied more than once (RFC 9112 6.1)"};
    return FramingProblem{http::status::not_implemented, "transfer coding '" + codings.front() + "' is not supported"};
}

// ":1234", ":" or nothing: what may follow a host name in Host.
bool port_suffix(std::string_view s) {
    if (s.empty()) return true;
    if (s.front() != ':' || s.size() > 6) return false;
    for (char c : s.substr(1))
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

bool keys_equal(std::string_view given, std::string_view key) {
    size_t diff = given.size() ^ key.size();
    const size_t n = key.size();
    for (size_t i = 0; i < given.size(); ++i) {
        const auto k = n ? static_cast<unsigned char>(key[i % n]) : static_cast<unsigned char>(0);
        diff |= static_cast<unsigned char>(static_cast<unsigned char>(given[i]) ^ k);
    }
    return diff == 0;
}

bool is_loopback_address(const std::string& host) {
    beast::error_code ec;
    auto addr = asio::ip::make_address(host, ec);
    return !ec && addr.is_loopback();
}

struct HttpServer::Impl {
    HttpOptions opts;
    std::map<std::pair<http::verb, std::string>, Handler> routes;
    ErrorFormatter format_error;
    asio::io_context ioc;  // after what sessions read: it destroys them
    tcp::acceptor acceptor{ioc};
    asio::steady_timer accept_backoff{ioc};
    std::vector<std::thread> threads;
    std::atomic<unsigned short> port{0};
    mutable std::atomic<int> sessions{0};  // open connections, counted by Session
    // Deferred and streamed replies not yet written to their end (a stop waits for these).
    mutable std::atomic<int> pending_replies{0};
    std::atomic<uint64_t> refused{0};      // connections refused at max_connections
    bool host_guard = false;               // check_host applies: keyless and bound to loopback
    std::string bound_name;                // the bound address as Host would name it ("[::2]")
    std::chrono::steady_clock::time_point last_accept_log{};

    Response error(const Request& req, http::status status, const std::string& message, const std::string& type) const {
        if (format_error) {
            try {
                return format_error(req, status, message, type);
            } catch (const std::exception& e) {
                log::error("error formatter failed: ", e.what());
            }
        }
        return error_response(req, status, message, type);
    }

    static bool key_matches(const Request& req, const std::vector<std::string>& keys) {
        const std::string_view bearer = bearer_token(std_view(req[http::field::authorization]));
        const std::string_view x_api_key = std_view(req["x-api-key"]);
        bool ok = false;  // every key compared: no early exit
        for (const auto& key : keys) {
            ok |= !bearer.empty() && keys_equal(bearer, key);
            ok |= !x_api_key.empty() && keys_equal(x_api_key, key);
        }
        return ok;
    }

    // The 401 for a request whose key does not open its path; empty when it may go on. Needs the
    // header only, so a connection asks before reading the body.
    std::optional<Response> denied(const Request& req) const {
        const std::string path = path_of(req);
        std::string message;
        if (!opts.admin_prefix.empty() && starts_with(path, opts.admin_prefix)) {
            if (!opts.admin_keys.empty() && key_matches(req, opts.admin_keys)) return std::nullopt;
            message = opts.admin_keys.empty() ? "admin endpoints are off: the server has no --admin-key"
                                              : "admin endpoints need the admin key (Authorization: Bearer KEY)";
        } else {
            if (opts.api_keys.empty()) return std::nullopt;
            for (const auto& open : opts.open_paths)
                if (path == open) return std::nullopt;
            if (key_matches(req, opts.api_keys)) return std::nullopt;
            message = "a valid API key is required (Authorization: Bearer KEY or x-api-key: KEY)";
        }
        Response res = error(req, http::status::unauthorized, message, "authentication_error");
        res.set(http::field::www_authenticate, "Bearer");
        return res;
    }

    // With host_guard: every Host the request names must be a loopback name (DNS rebinding).
    std::optional<std::string> foreign_host(const Request& req) const {
        if (!host_guard) return std::nullopt;
        for (const auto& f : req) {
            if (f.name() != http::field::host) continue;
            const std::string h = lower(std_view(f.value()));
            std::string name = h;
            std::string_view rest;
            if (!h.empty() && h.front() == '[') {
                const size_t e = h.find(']');
                name = e == std::string::npos ? h : h.substr(0, e + 1);
                rest = e == std::string::npos ? std::string_view() : std::string_view(h).substr(e + 1);
            } else if (const size_t c = h.find(':'); c != std::string::npos) {
                name = h.substr(0, c);
                rest = std::string_view(h).substr(c);
            }
            if (!name.empty() && name.back() == '.' && name.front() != '[') name.pop_back();
            const bool ok = port_suffix(rest) &&
                            (name == "localhost" || name == "127.0.0.1" || name == "[::1]" || name == bound_name);
            if (!ok) return std::string(f.value());
        }
        return std::nullopt;  // no Host at all: no browser sends that
    }

    // Whether some route serves this path, by any method.
    bool routed(const std::string& path) const {
        return std::any_of(routes.begin(), routes.end(), [&](const auto& r) { return r.first.second == path; });
    }

    void answered(const Request& req, http::status status) const {
        if (!opts.on_answer) return;
        const std::string path = path_of(req);
        opts.on_answer(routed(path) ? path : "other", static_cast<int>(status));
    }

    Reply handle(const Request& req) const {
        const std::string path = path_of(req);
        if (auto res = denied(req)) return std::move(*res);
        auto it = routes.find({req.method(), path});
        if (it != routes.end()) {
            try {
                return it->second(req);
            } catch (const std::exception& e) {
                log::error("handler for ", path, " failed: ", e.what());
                return error(req, http::status::internal_server_error, e.what(), "server_error");
            } catch (...) {
                log::error("handler for ", path, " failed");
                return error(req, http::status::internal_server_error, "internal error", "server_error");
            }
        }
        if (routed(path))
            return error(req, http::status::method_not_allowed, "method " + std::string(req.method_string()) + " is not allowed on " + path,
                         "invalid_request_error");
        return error(req, http::status::not_found, "no route for " + path, "not_found_error");
    }

    void accept();
    void on_accept_error(beast::error_code ec);
    void refuse(tcp::socket sock);
};

// ---------------------------------------------------------------------------------------------
// One connection. Every handler runs on the connection's strand (the socket's executor), so the
// members need no lock; StreamWriter wakes the strand up from other threads by posting pump().
//
// While a deferred or streamed reply is pending, one read stays posted on the socket: it ends
// with an error when the client disconnects, which is how a generation learns to stop before it
// has anything to write.

struct HttpServer::Session : std::enable_shared_from_this<HttpServer::Session> {
    Session(const Impl& server, tcp::socket sock)
        : server(server), stream(std::move(sock)), timer(stream.get_executor()) {
        ++server.sessions;
    }

    ~Session() {
        if (writer && active) writer->mark_client_gone();  // the server is stopping
        detach_writer();
        reply_written();
        --server.sessions;
    }

    // A deferred or streamed reply counts in pending_replies from its request until its last
    // byte is written (or the connection is gone).
    bool pending = false;
    void reply_pending() {
        pending = true;
        ++server.pending_replies;
    }
    void reply_written() {
        if (std::exchange(pending, false)) --server.pending_replies;
    }

    const Impl& server;
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    std::optional<http::request_parser<http::string_body>> parser;
    asio::steady_timer timer;

    Request current;  // the request being answered, without its body (error formatting needs it)
    bool keep_alive = false;
    Reply::Kind kind = Reply::Kind::Immediate;
    std::shared_ptr<StreamWriter> writer;
    bool active = false;    // waiting on the writer for more of the reply
    bool chunked = false;   // streamed body in chunked encoding (HTTP/1.1); else ended by closing
    bool writing = false;   // a write of the streamed reply is in flight
    bool watching = false;  // the disconnect-watch read is posted
    bool discarding = false;  // pipelined bytes past the header limit came while a reply was pending: dropped
    size_t drain_left = SIZE_MAX;  // what a lingering close reads at most
    enum class AfterWatch { Nothing, ReadNext, Drain } after_watch = AfterWatch::Nothing;

    std::chrono::seconds idle() const { return std::chrono::seconds(server.opts.idle_timeout_s); }

    void start() { read_request(); }

    void read_request() {
        parser.emplace();
        parser->body_limit(server.opts.body_limit);
        parser->header_limit(static_cast<uint32_t>(server.opts.header_limit));
        stream.expires_after(idle());
        http::async_read_header(stream, buffer, *parser,
                                [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
    }

    void on_header(beast::error_code ec) {
        if (ec) return on_read_error(ec);
        // Checked on the header alone: nothing of a refused request's body is read, and since it
        // cannot be skipped safely (its framing may be the problem) the connection closes.
        const Request& h = parser->get();
        keep_alive = h.keep_alive();
        if (auto bad = framing_problem(h)) {
            keep_alive = false;
            return refuse_before_body(bad->status, bad->message, "invalid_request_error");
        }
        if (auto host = server.foreign_host(h))
            return refuse_before_body(http::status::misdirected_request,
                                      "Host '" + *host +
                                          "' is not this server: without an API key, a server on a loopback address "
                                          "answers only localhost, 127.0.0.1 and [::1] (DNS rebinding)",
                                      "invalid_request_error");
        if (auto res = server.denied(h)) return refuse_before_body(std::move(*res));
        // curl and others wait (a second, by default) for this before sending a large body.
        if (beast::iequals(parser->get()[http::field::expect], "100-continue")) {
            auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, parser->get().version());
            http::async_write(stream, *cont, [self = shared_from_this(), cont](beast::error_code ec2, size_t) {
                if (ec2) return self->close();
                self->read_body();
            });
            return;
        }
        read_body();
    }

    void refuse_before_body(http::status status, const std::string& message, const std::string& type) {
        Request head;
        head.base() = parser->get().base();
        refuse_before_body(server.error(head, status, message, type));
    }

    // A request without a body (parsed whole with its header) keeps its connection unless
    // `keep_alive` was cleared; one with a body closes it.
    void refuse_before_body(Response res) {
        current = Request();
        current.base() = parser->get().base();
        if (!parser->is_done()) {
            keep_alive = false;
            drain_left = 64 * 1024;  // enough for a small body in flight to not reset the answer
        }
        send_final(std::move(res));
    }

    void read_body() {
        http::async_read(stream, buffer, *parser,
                         [self = shared_from_this()](beast::error_code ec, size_t) { self->on_request(ec); });
    }

    void on_read_error(beast::error_code ec) {
        current = Request();
        current.base() = parser->get().base();
        keep_alive = false;
        if (ec == http::error::body_limit)
            return send_final(server.error(current, http::status::payload_too_large,
                                           "request body is over the limit of " + std::to_string(server.opts.body_limit) +
                                               " bytes",
                                           "invalid_request_error"));
        if (ec == http::error::header_limit)
            return send_final(server.error(current, http::status::request_header_fields_too_large,
                                           "request headers are over the limit of " +
                                               std::to_string(server.opts.header_limit) + " bytes",
                                           "invalid_request_error"));
        const bool http_error = ec.category() == http::make_error_code(http::error::bad_method).category();
        if (http_error && ec != http::error::end_of_stream && ec != http::error::partial_message) {
            current.version(11);
            return send_final(server.error(current, http::status::bad_request, "malformed HTTP request: " + ec.message(),
                                           "invalid_request_error"));
        }
        close();  // the peer closed, reset or timed out
    }

    void on_request(beast::error_code ec) {
        if (ec) return on_read_error(ec);
        Request req = parser->release();
        keep_alive = req.keep_alive();
        current = Request();
        current.base() = req.base();
        Reply reply = server.handle(req);
        kind = reply.kind;
        if (reply.kind == Reply::Kind::Immediate || !reply.writer) return send_final(std::move(reply.response));
        writer = std::move(reply.writer);
        active = true;
        reply_pending();
        timer.expires_after(std::chrono::seconds(server.opts.request_timeout_s));
        timer.async_wait([self = shared_from_this()](beast::error_code tec) {
            if (!tec) self->on_timeout();
        });
        if (reply.kind == Reply::Kind::Deferred) return attach_writer();
        write_head(std::move(reply.response));
    }

    void write_head(Response head) {
        server.answered(current, head.result());
        auto h = std::make_shared<http::response<http::empty_body>>(std::move(head.base()));
        chunked = current.version() >= 11;
        if (!chunked) keep_alive = false;  // HTTP/1.0: the body ends when the connection does
        h->version(current.version());
        h->keep_alive(keep_alive);
        h->erase(http::field::content_length);  // a prepared head would contradict the chunked body
        h->chunked(chunked);
        auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*h);
        writing = true;
        stream.expires_after(idle());
        http::async_write_header(stream, *sr, [self = shared_from_this(), h, sr](beast::error_code ec, size_t) {
            self->writing = false;
            if (ec) return self->client_went();
            self->attach_writer();
        });
    }

    void attach_writer() {
        watch();
        std::weak_ptr<Session> weak = shared_from_this();
        auto ex = stream.get_executor();
        writer->set_wakeup([weak, ex] {
            asio::post(ex, [weak] {
                if (auto s = weak.lock()) s->pump();
            });
        });
    }

    void detach_writer() {
        if (writer) writer->set_wakeup({});
        writer.reset();
    }

    // No more from the writer: the reply's last write is starting, or it is abandoned.
    void finish_async() {
        active = false;
        timer.cancel();
        detach_writer();
    }

    void watch() {
        if (watching) return;
        stream.expires_never();  // only the read's timer: nothing else is pending now
        watching = true;
        stream.async_read_some(buffer.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
            self->on_watch(ec, n);
        });
    }

    void on_watch(beast::error_code ec, size_t n) {
        watching = false;
        if (!ec) keep_pipelined(n);
        const AfterWatch next = std::exchange(after_watch, AfterWatch::Nothing);
        const bool ok = !ec || ec == asio::error::operation_aborted;
        if (next == AfterWatch::ReadNext) return ok ? read_request() : close();
        if (next == AfterWatch::Drain) return ok ? drain_briefly() : close();
        if (!active) return;  // the reply's last write is under way; after_reply reads on
        if (ec && ec != asio::error::operation_aborted) return client_went();
        // Bytes while a reply is pending: keep them and go on watching, so that a client that
        // sends more and then leaves is still noticed (a write may be long in coming).
        if (!ec) watch();
    }

    // Pipelined bytes: the next parse starts from them. Past header_limit they are dropped, the
    // rest of what comes only watched, and the connection closes after the reply.
    void keep_pipelined(size_t n) {
        if (discarding) return;  // prepared, never committed: overwritten by the next read
        buffer.commit(n);
        if (buffer.size() <= server.opts.header_limit) return;
        buffer.consume(buffer.size());
        discarding = true;
        keep_alive = false;
    }

    void pump() {
        if (!active || writing || !writer) return;
        StreamWriter::Pending p = writer->take();
        if (kind == Reply::Kind::Deferred) {
            if (!p.response) return;
            finish_async();
            return send_final(std::move(*p.response));
        }
        if (!p.body.empty()) {
            auto data = std::make_shared<std::string>(std::move(p.body));
            writing = true;
            stream.expires_after(idle());  // a client that stops reading is dropped, not buffered forever
            auto done = [self = shared_from_this(), data](beast::error_code ec, size_t) {
                self->writing = false;
                if (ec) return self->client_went();
                self->pump();
            };
            if (chunked) asio::async_write(stream, http::make_chunk(asio::buffer(*data)), done);
            else asio::async_write(stream, asio::buffer(*data), done);
            return;
        }
        if (!p.closed) return;
        finish_async();
        if (!chunked) {
            reply_written();
            return after_reply(false);
        }
        writing = true;
        stream.expires_after(idle());
        asio::async_write(stream, http::make_chunk_last(), [self = shared_from_this()](beast::error_code ec, size_t) {
            self->writing = false;
            self->reply_written();
            if (ec) return self->close();
            self->after_reply(self->keep_alive);
        });
    }

    void on_timeout() {
        if (!active) return;
        auto w = writer;
        finish_async();
        w->mark_client_gone();  // lets the handler's side cancel its work
        if (kind == Reply::Kind::Stream) return close();  // the status is sent; cutting the stream is all we can do
        keep_alive = false;
        send_final(server.error(current, http::status::gateway_timeout,
                                "the request took longer than " + std::to_string(server.opts.request_timeout_s) + " s",
                                "timeout_error"));
    }

    void client_went() {
        if (!active) return close();
        auto w = writer;
        finish_async();
        w->mark_client_gone();
        close();
    }

    void send_final(Response res) {
        server.answered(current, res.result());
        const bool ka = keep_alive && !beast::iequals(res[http::field::connection], "close");
        res.version(current.version() ? current.version() : 11);
        res.keep_alive(ka);
        res.prepare_payload();
        auto sp = std::make_shared<Response>(std::move(res));
        stream.expires_after(idle());
        http::async_write(stream, *sp, [self = shared_from_this(), sp](beast::error_code ec, size_t) {
            self->reply_written();
            if (ec) return self->close();
            self->after_reply(sp->keep_alive());
        });
    }

    void after_reply(bool ka) {
        if (!ka) return linger_close();
        if (watching) return end_watch(AfterWatch::ReadNext);  // one read at a time
        read_request();
    }

    void end_watch(AfterWatch next) {
        after_watch = next;
        beast::error_code ignored;
        stream.socket().cancel(ignored);  // nothing but the watch read is pending here
    }

    // Closing with unread request bytes would reset the connection and could destroy the answer
    // before the client reads it (a 413 in particular): end our side, then drain briefly.
    void linger_close() {
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        if (watching) return end_watch(AfterWatch::Drain);
        drain_briefly();
    }

    void drain_briefly() {
        stream.expires_after(std::chrono::seconds(2));
        drain(std::make_shared<std::array<char, 4096>>());
    }

    void drain(std::shared_ptr<std::array<char, 4096>> scratch) {
        if (drain_left == 0) return close();
        stream.async_read_some(asio::buffer(*scratch), [self = shared_from_this(), scratch](beast::error_code ec, size_t n) {
            if (ec) return self->close();
            self->drain_left -= std::min(self->drain_left, n);
            self->drain(scratch);
        });
    }

    void close() {
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        stream.socket().close(ignored);
    }
};

void HttpServer::Impl::accept() {
    acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket sock) {
        if (!acceptor.is_open()) return;
        if (ec) return on_accept_error(ec);
        if (sessions.load() >= opts.max_connections) refuse(std::move(sock));
        else std::make_shared<Session>(*this, std::move(sock))->start();
        accept();
    });
}

// Out of descriptors (or kernel memory) the pending connection stays queued and accept would fail
// again at once: wait a little instead of spinning a core, then take it when something closed.
void HttpServer::Impl::on_accept_error(beast::error_code ec) {
    if (ec == asio::error::operation_aborted) return;
    // By errno in the system category (accept's own codes), not through boost::system::errc:
    // comparing with those builds error_conditions on Boost 1.74's constexpr generic_category,
    // which clang's UBSan vptr check reports as an invalid object.
    const int e = ec.value();
    const bool exhausted = ec.category() == asio::error::get_system_category() &&
                           (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM);
    if (!exhausted) return accept();  // one connection's trouble (reset before accept): go on
    const auto now = std::chrono::steady_clock::now();
    if (now - last_accept_log > std::chrono::seconds(5)) {
        last_accept_log = now;
        log::warn("accept failed: ", ec.message(), " (", sessions.load(), " connections open); retrying every 100 ms");
    }
    accept_backoff.expires_after(std::chrono::milliseconds(100));
    accept_backoff.async_wait([this](beast::error_code tec) {
        if (!tec && acceptor.is_open()) accept();
    });
}

// Past max_connections: a 503 written without waiting (a fresh socket's send buffer takes it),
// then closed; nothing is read.
void HttpServer::Impl::refuse(tcp::socket sock) {
    static const std::string body =
        R"({"error":{"message":"too many connections","type":"server_error","param":null,"code":503}})";
    static const std::string answer = "HTTP/1.1 503 Service Unavailable\r\nServer: radiance\r\nContent-Type: application/json\r\n"
                                      "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
                                      std::to_string(body.size()) + "\r\n\r\n" + body;
    beast::error_code ignored;
    sock.non_blocking(true, ignored);
    sock.write_some(asio::buffer(answer), ignored);
    sock.shutdown(tcp::socket::shutdown_both, ignored);
    sock.close(ignored);
    const uint64_t n = ++refused;
    if ((n & (n - 1)) == 0)  // the 1st, 2nd, 4th, 8th, ...: a flood does not flood the log
        log::warn("refused a connection: ", opts.max_connections, " are open (--max-connections); ", n, " refused so far");
}

// ---------------------------------------------------------------------------------------------
// HttpServer

HttpServer::HttpServer(HttpOptions opts) : impl_(std::make_unique<Impl>()) { impl_->opts = std::move(opts); }
HttpServer::~HttpServer() { stop(); }

void HttpServer::route(http::verb method, const std::string& path, Handler h) {
    impl_->routes[{method, path}] = std::move(h);
}

void HttpServer::set_error_formatter(ErrorFormatter f) { impl_->format_error = std::move(f); }

Reply HttpServer::handle(const Request& req) const { return impl_->handle(req); }

void HttpServer::listen() {
    if (impl_->acceptor.is_open()) return;
    beast::error_code ec;
    auto addr = asio::ip::make_address(impl_->opts.host, ec);
    if (ec) throw Error("--host " + impl_->opts.host + " is not an IP address");
    tcp::endpoint ep{addr, impl_->opts.port};
    impl_->acceptor.open(ep.protocol(), ec);
    if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) impl_->acceptor.bind(ep, ec);
    if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw Error("cannot listen on " + impl_->opts.host + ":" + std::to_string(impl_->opts.port) + ": " + ec.message());
    impl_->port = impl_->acceptor.local_endpoint().port();
    impl_->host_guard = impl_->opts.check_host && impl_->opts.api_keys.empty() && addr.is_loopback();
    impl_->bound_name = addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string();
    log::info("listening on http://", impl_->opts.host, ":", impl_->port.load());
}

void HttpServer::run() {
    listen();
    impl_->accept();
    for (int i = 1; i < impl_->opts.threads; ++i) impl_->threads.emplace_back([this] { impl_->ioc.run(); });
    impl_->ioc.run();
    for (auto& t : impl_->threads) t.join();
    impl_->threads.clear();
}

void HttpServer::stop(std::chrono::milliseconds grace) {
    asio::post(impl_->ioc, [this] {
        beast::error_code ec;
        impl_->acceptor.close(ec);
    });
    const auto until = std::chrono::steady_clock::now() + grace;
    while (impl_->pending_replies.load() > 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    impl_->ioc.stop();
}

int HttpServer::pending_replies() const { return impl_->pending_replies.load(); }

unsigned short HttpServer::bound_port() const { return impl_->port; }

const HttpOptions& HttpServer::options() const { return impl_->opts; }

}  // namespace radiance::frontend
