// http_server.h: HTTP/1.1 on Boost.Beast: keep-alive, a body limit, many connections on a few
// threads. Handlers see a parsed request and return a response; routing is by method and path.
#pragma once
#include <boost/beast/http.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace radiance::frontend {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using Handler = std::function<Response(const Request&)>;

struct HttpOptions {
    std::string host = "127.0.0.1";
    unsigned short port = 8080;
    int threads = 2;
    size_t body_limit = 8 * 1024 * 1024;  // 413 past this
    int idle_timeout_s = 120;
};

// A JSON response with the right headers.
Response json_response(const Request& req, http::status status, const std::string& body);
// An OpenAI-style error: {"error": {"message", "type", "param", "code"}}.
Response error_response(const Request& req, http::status status, const std::string& message,
                        const std::string& type, const std::string& param = "");

class HttpServer {
public:
    explicit HttpServer(HttpOptions opts);
    ~HttpServer();
    void route(http::verb method, const std::string& path, Handler h);
    // Binds and serves until stop(); throws radiance::Error if the address cannot be bound.
    void run();
    void stop();
    unsigned short bound_port() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace radiance::frontend
