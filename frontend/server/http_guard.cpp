// http_guard.cpp: what is checked before a handler runs (request framing, API and admin keys, the
// Host of a keyless loopback server) and routing to the handler.
#include <algorithm>

#include "http_server_impl.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

namespace http_detail {

std::string path_of(const Request& req) {
    std::string path(req.target());
    if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
    return path;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix; }

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

}  // namespace http_detail

using namespace http_detail;

namespace {

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

Response HttpServer::Impl::error(const Request& req, http::status status, const std::string& message, const std::string& type) const {
    if (format_error) {
        try {
            return format_error(req, status, message, type);
        } catch (const std::exception& e) {
            log::error("error formatter failed: ", e.what());
        }
    }
    return error_response(req, status, message, type);
}

bool HttpServer::Impl::key_matches(const Request& req, const std::vector<std::string>& keys) {
    const std::string_view bearer = bearer_token(std_view(req[http::field::authorization]));
    const std::string_view x_api_key = std_view(req["x-api-key"]);
    bool ok = false;  // every key compared: no early exit
    for (const auto& key : keys) {
        ok |= !bearer.empty() && keys_equal(bearer, key);
        ok |= !x_api_key.empty() && keys_equal(x_api_key, key);
    }
    return ok;
}

std::optional<Response> HttpServer::Impl::denied(const Request& req) const {
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

std::optional<std::string> HttpServer::Impl::foreign_host(const Request& req) const {
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
        const bool ok = port_suffix(rest) && (name == "localhost" || name == "127.0.0.1" || name == "[::1]" || name == bound_name);
        if (!ok) return std::string(f.value());
    }
    return std::nullopt;  // no Host at all: no browser sends that
}

std::string HttpServer::Impl::pattern_of(const std::string& path) const {
    static constexpr std::string_view kId = "{id}";
    std::string pattern;
    for (const auto& r : routes) {
        const std::string& p = r.first.second;
        if (p == path) return p;
        if (p.size() > kId.size() && p.compare(p.size() - kId.size(), kId.size(), kId) == 0) {
            const size_t prefix = p.size() - kId.size();
            if (path.size() > prefix && path.compare(0, prefix, p, 0, prefix) == 0) pattern = p;
        }
    }
    return pattern;
}

void HttpServer::Impl::answered(const Request& req, http::status status) const {
    if (!opts.on_answer) return;
    const std::string pattern = pattern_of(path_of(req));  // a pattern, so ids never become labels
    opts.on_answer(pattern.empty() ? "other" : pattern, static_cast<int>(status));
}

Reply HttpServer::Impl::handle(const Request& req) const {
    const std::string path = path_of(req);
    if (auto res = denied(req)) return std::move(*res);
    const std::string pattern = pattern_of(path);
    auto it = routes.find({req.method(), pattern});
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
    if (!pattern.empty())
        return error(req, http::status::method_not_allowed, "method " + std::string(req.method_string()) + " is not allowed on " + path,
                     "invalid_request_error");
    return error(req, http::status::not_found, "no route for " + path, "not_found_error");
}

}  // namespace radiance::frontend
