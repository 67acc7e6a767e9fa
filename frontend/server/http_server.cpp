#include "http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

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
                        const std::string& param) {
    nlohmann::json j = {{"error",
                         {{"message", message},
                          {"type", type},
                          {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
                          {"code", static_cast<int>(status)}}}};
    return json_response(req, status, j.dump());
}

struct HttpServer::Impl {
    HttpOptions opts;
    asio::io_context ioc;
    tcp::acceptor acceptor{ioc};
    std::map<std::pair<http::verb, std::string>, Handler> routes;
    std::vector<std::thread> threads;
    std::atomic<unsigned short> port{0};

    Response dispatch(const Request& req) {
        std::string path(req.target());
        if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
        auto it = routes.find({req.method(), path});
        if (it != routes.end()) {
            try {
                return it->second(req);
            } catch (const std::exception& e) {
                log::error("handler for ", path, " failed: ", e.what());
                return error_response(req, http::status::internal_server_error, e.what(), "server_error");
            }
        }
        for (auto& [key, h] : routes)
            if (key.second == path)
                return error_response(req, http::status::method_not_allowed,
                                      "method " + std::string(req.method_string()) + " is not allowed on " + path,
                                      "invalid_request_error");
        return error_response(req, http::status::not_found, "no route for " + path, "not_found_error");
    }

    // One connection: read requests until the peer closes or stops keeping alive.
    void session(tcp::socket sock) {
        auto stream = std::make_shared<beast::tcp_stream>(std::move(sock));
        auto buffer = std::make_shared<beast::flat_buffer>();
        read_next(stream, buffer);
    }

    void read_next(std::shared_ptr<beast::tcp_stream> stream, std::shared_ptr<beast::flat_buffer> buffer) {
        auto parser = std::make_shared<http::request_parser<http::string_body>>();
        parser->body_limit(opts.body_limit);
        stream->expires_after(std::chrono::seconds(opts.idle_timeout_s));
        http::async_read(*stream, *buffer, *parser, [this, stream, buffer, parser](beast::error_code ec, size_t) {
            if (ec == http::error::body_limit) {
                Request stub;
                stub.version(11);
                stub.keep_alive(false);
                write(stream, buffer,
                      error_response(stub, http::status::payload_too_large,
                                     "request body is over the limit of " + std::to_string(opts.body_limit) + " bytes",
                                     "invalid_request_error"));
                return;
            }
            if (ec) return;  // closed, timed out or malformed: drop the connection
            Request req = parser->release();
            write(stream, buffer, dispatch(req));
        });
    }

    void write(std::shared_ptr<beast::tcp_stream> stream, std::shared_ptr<beast::flat_buffer> buffer, Response res) {
        auto sp = std::make_shared<Response>(std::move(res));
        http::async_write(*stream, *sp, [this, stream, buffer, sp](beast::error_code ec, size_t) {
            if (ec || !sp->keep_alive()) {
                beast::error_code ignored;
                stream->socket().shutdown(tcp::socket::shutdown_send, ignored);
                return;
            }
            read_next(stream, buffer);
        });
    }

    void accept() {
        acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket sock) {
            if (!acceptor.is_open()) return;
            if (!ec) session(std::move(sock));
            accept();
        });
    }
};

HttpServer::HttpServer(HttpOptions opts) : impl_(std::make_unique<Impl>()) { impl_->opts = std::move(opts); }
HttpServer::~HttpServer() { stop(); }

void HttpServer::route(http::verb method, const std::string& path, Handler h) {
    impl_->routes[{method, path}] = std::move(h);
}

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

}  // namespace radiance::frontend
