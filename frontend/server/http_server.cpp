#include "http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <map>
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

// Compares in time that depends on the lengths only, so a key cannot be guessed byte by byte.
bool same_key(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

// Boost 1.74's Beast has its own string_view.
std::string_view std_view(beast::string_view v) { return {v.data(), v.size()}; }

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

}  // namespace

struct HttpServer::Impl {
    HttpOptions opts;
    std::map<std::pair<http::verb, std::string>, Handler> routes;
    ErrorFormatter format_error;
    asio::io_context ioc;  // after what sessions read: it destroys them
    tcp::acceptor acceptor{ioc};
    std::vector<std::thread> threads;
    std::atomic<unsigned short> port{0};

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

    bool authorized(const Request& req, const std::string& path) const {
        if (opts.api_keys.empty()) return true;
        for (const auto& open : opts.open_paths)
            if (path == open) return true;
        const std::string_view bearer = bearer_token(std_view(req[http::field::authorization]));
        const std::string_view x_api_key = std_view(req["x-api-key"]);
        for (const auto& key : opts.api_keys)
            if ((!bearer.empty() && same_key(bearer, key)) || (!x_api_key.empty() && same_key(x_api_key, key)))
                return true;
        return false;
    }

    Reply handle(const Request& req) const {
        const std::string path = path_of(req);
        if (!authorized(req, path)) {
            Response res = error(req, http::status::unauthorized,
                                 "a valid API key is required (Authorization: Bearer KEY or x-api-key: KEY)",
                                 "authentication_error");
            res.set(http::field::www_authenticate, "Bearer");
            return res;
        }
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
        for (auto& [key, h] : routes)
            if (key.second == path)
                return error(req, http::status::method_not_allowed,
                             "method " + std::string(req.method_string()) + " is not allowed on " + path,
                             "invalid_request_error");
        return error(req, http::status::not_found, "no route for " + path, "not_found_error");
    }

    void accept();
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
        : server(server), stream(std::move(sock)), timer(stream.get_executor()) {}

    ~Session() {
        if (writer && active) writer->mark_client_gone();  // the server is stopping
        detach_writer();
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
        timer.expires_after(std::chrono::seconds(server.opts.request_timeout_s));
        timer.async_wait([self = shared_from_this()](beast::error_code tec) {
            if (!tec) self->on_timeout();
        });
        if (reply.kind == Reply::Kind::Deferred) return attach_writer();
        write_head(std::move(reply.response));
    }

    void write_head(Response head) {
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
        if (!ec) buffer.commit(n);  // a pipelined request: the next parse starts from it
        const AfterWatch next = std::exchange(after_watch, AfterWatch::Nothing);
        const bool ok = !ec || ec == asio::error::operation_aborted;
        if (next == AfterWatch::ReadNext) return ok ? read_request() : close();
        if (next == AfterWatch::Drain) return ok ? drain_briefly() : close();
        if (active && ec && ec != asio::error::operation_aborted) client_went();
        // Bytes while a reply is pending: stop watching; a failed write still notices a disconnect.
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
        if (!chunked) return after_reply(false);
        writing = true;
        stream.expires_after(idle());
        asio::async_write(stream, http::make_chunk_last(), [self = shared_from_this()](beast::error_code ec, size_t) {
            self->writing = false;
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
        const bool ka = keep_alive && !beast::iequals(res[http::field::connection], "close");
        res.version(current.version() ? current.version() : 11);
        res.keep_alive(ka);
        res.prepare_payload();
        auto sp = std::make_shared<Response>(std::move(res));
        stream.expires_after(idle());
        http::async_write(stream, *sp, [self = shared_from_this(), sp](beast::error_code ec, size_t) {
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
        stream.async_read_some(asio::buffer(*scratch), [self = shared_from_this(), scratch](beast::error_code ec, size_t) {
            if (ec) return self->close();
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
        if (!ec) std::make_shared<Session>(*this, std::move(sock))->start();
        accept();
    });
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

void HttpServer::run() {
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
    log::info("listening on http://", impl_->opts.host, ":", impl_->port.load());
    impl_->accept();
    for (int i = 1; i < impl_->opts.threads; ++i) impl_->threads.emplace_back([this] { impl_->ioc.run(); });
    impl_->ioc.run();
    for (auto& t : impl_->threads) t.join();
    impl_->threads.clear();
}

void HttpServer::stop() {
    asio::post(impl_->ioc, [this] {
        beast::error_code ec;
        impl_->acceptor.close(ec);
    });
    impl_->ioc.stop();
}

unsigned short HttpServer::bound_port() const { return impl_->port; }

const HttpOptions& HttpServer::options() const { return impl_->opts; }

}  // namespace radiance::frontend
