// http_session.cpp: one connection's state machine: read a request (headers checked before the
// body), answer it at once or attach its StreamWriter, watch for the client leaving while a reply
// is pending, keep-alive and pipelining, timeouts, a lingering close.
#include <utility>

#include "http_server_impl.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

using namespace http_detail;

// One connection. Every handler runs on the connection's strand (the socket's executor), so the
// members need no lock; StreamWriter wakes the strand up from other threads by posting pump().
//
// While a deferred or streamed reply is pending, one read stays posted on the socket: it ends
// with an error when the client disconnects, which is how a generation learns to stop before it
// has anything to write.

struct HttpServer::Session : std::enable_shared_from_this<HttpServer::Session> {
    Session(const Impl& server, tcp::socket sock) : server(server), stream(std::move(sock)), timer(stream.get_executor()) {
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
    bool active = false;           // waiting on the writer for more of the reply
    bool chunked = false;          // streamed body in chunked encoding (HTTP/1.1); else ended by closing
    bool writing = false;          // a write of the streamed reply is in flight
    bool watching = false;         // the disconnect-watch read is posted
    bool discarding = false;       // pipelined bytes past the header limit came while a reply was pending: dropped
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
        http::async_read(stream, buffer, *parser, [self = shared_from_this()](beast::error_code ec, size_t) { self->on_request(ec); });
    }

    void on_read_error(beast::error_code ec) {
        current = Request();
        current.base() = parser->get().base();
        keep_alive = false;
        if (ec == http::error::body_limit)
            return send_final(server.error(current, http::status::payload_too_large,
                                           "request body is over the limit of " + std::to_string(server.opts.body_limit) + " bytes",
                                           "invalid_request_error"));
        if (ec == http::error::header_limit)
            return send_final(server.error(current, http::status::request_header_fields_too_large,
                                           "request headers are over the limit of " + std::to_string(server.opts.header_limit) + " bytes",
                                           "invalid_request_error"));
        const bool http_error = ec.category() == http::make_error_code(http::error::bad_method).category();
        if (http_error && ec != http::error::end_of_stream && ec != http::error::partial_message) {
            current.version(11);
            return send_final(
                server.error(current, http::status::bad_request, "malformed HTTP request: " + ec.message(), "invalid_request_error"));
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
        stream.async_read_some(buffer.prepare(4096),
                               [self = shared_from_this()](beast::error_code ec, size_t n) { self->on_watch(ec, n); });
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
            if (chunked)
                asio::async_write(stream, http::make_chunk(asio::buffer(*data)), done);
            else
                asio::async_write(stream, asio::buffer(*data), done);
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
        w->mark_client_gone();                            // lets the handler's side cancel its work
        if (kind == Reply::Kind::Stream) return close();  // the status is sent; cutting the stream is all we can do
        keep_alive = false;
        send_final(server.error(current, http::status::gateway_timeout,
                                "the request took longer than " + std::to_string(server.opts.request_timeout_s) + " s", "timeout_error"));
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

void HttpServer::Impl::start_session(tcp::socket sock) const { std::make_shared<HttpServer::Session>(*this, std::move(sock))->start(); }

}  // namespace radiance::frontend
