// http_server.cpp: the server itself: binding, the io threads, accepting (with a connection cap
// and a back-off when out of descriptors) and stopping. Connections are http_session.cpp's,
// checks and routing http_guard.cpp's.
#include <cerrno>

#include "http_server_impl.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

void HttpServer::Impl::accept() {
    acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket sock) {
        if (!acceptor.is_open()) return;
        if (ec) return on_accept_error(ec);
        if (sessions.load() >= opts.max_connections)
            refuse(std::move(sock));
        else
            start_session(std::move(sock));
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
    const bool exhausted =
        ec.category() == asio::error::get_system_category() && (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM);
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
    static const std::string body = R"({"error":{"message":"too many connections","type":"server_error","param":null,"code":503}})";
    static const std::string answer =
        "HTTP/1.1 503 Service Unavailable\r\nServer: radiance\r\nContent-Type: application/json\r\n"
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

void HttpServer::route(http::verb method, const std::string& path, Handler h) { impl_->routes[{method, path}] = std::move(h); }

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
