// http_server_impl.h: what the HTTP server's files share and nobody else sees: HttpServer::Impl
// (options, routes, the io context, counters), the request checks (framing, keys, Host) and the
// connection's entry point. http_guard.cpp checks and routes, http_session.cpp runs a
// connection, http_server.cpp accepts and owns the threads.
#pragma once
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "http_server.h"

namespace radiance::frontend {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace http_detail {

std::string path_of(const Request& req);
// Boost 1.74's Beast has its own string_view.
inline std::string_view std_view(beast::string_view v) { return {v.data(), v.size()}; }
bool starts_with(std::string_view s, std::string_view prefix);
std::string lower(std::string_view s);
std::string_view bearer_token(std::string_view authorization);

// RFC 9112 6.1 and 6.3: framing that a proxy in front could read differently from us (request
// smuggling) is refused. Empty when the framing is sound.
struct FramingProblem {
    http::status status;
    std::string message;
};
std::optional<FramingProblem> framing_problem(const Request& h);

}  // namespace http_detail

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
    std::atomic<uint64_t> refused{0};  // connections refused at max_connections
    bool host_guard = false;           // check_host applies: keyless and bound to loopback
    std::string bound_name;            // the bound address as Host would name it ("[::2]")
    std::chrono::steady_clock::time_point last_accept_log{};

    // Routing and API keys (http_guard.cpp).
    Response error(const Request& req, http::status status, const std::string& message, const std::string& type) const;
    static bool key_matches(const Request& req, const std::vector<std::string>& keys);
    // The 401 for a request whose key does not open its path; empty when it may go on. Needs the
    // header only, so a connection asks before reading the body.
    std::optional<Response> denied(const Request& req) const;
    // With host_guard: every Host the request names must be a loopback name (DNS rebinding).
    std::optional<std::string> foreign_host(const Request& req) const;
    // Whether some route serves this path, by any method.
    // The route pattern serving `path` (itself, or a "prefix{id}" one), empty where none does.
    std::string pattern_of(const std::string& path) const;
    void answered(const Request& req, http::status status) const;
    Reply handle(const Request& req) const;

    // Starts serving one accepted connection (http_session.cpp).
    void start_session(tcp::socket sock) const;

    // Accepting (http_server.cpp).
    void accept();
    void on_accept_error(beast::error_code ec);
    void refuse(tcp::socket sock);
};

}  // namespace radiance::frontend
