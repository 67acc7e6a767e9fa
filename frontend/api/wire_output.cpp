#include "wire_output.h"

#include <atomic>
#include <chrono>
#include <random>

namespace radiance::frontend {

std::string sse_data(const ordered_json& j) { return "data: " + dump_json(j) + "\n\n"; }

std::string sse_event(std::string_view event, const ordered_json& j) {
    return "event: " + std::string(event) + "\ndata: " + dump_json(j) + "\n\n";
}

std::string new_request_id(std::string_view prefix) {
    // A random per-process base plus a counter, mixed: unique without a lock or a shared RNG.
    static const uint64_t base = std::random_device{}() * 0x9E3779B97F4A7C15ull ^ std::random_device{}();
    static std::atomic<uint64_t> counter{0};
    auto mix = [](uint64_t z) {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    const uint64_t n = counter.fetch_add(1);
    const uint64_t a = mix(base + n), b = mix(a ^ n);
    static const char* hex = "0123456789abcdef";
    std::string id(prefix);
    for (int i = 0; i < 16; ++i) id += hex[(a >> (i * 4)) & 15];
    for (int i = 0; i < 8; ++i) id += hex[(b >> (i * 4)) & 15];
    return id;
}

int64_t unix_time() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

ordered_json token_ids_json(const std::vector<ShownToken>& tokens) {
    ordered_json ids = ordered_json::array();
    for (const auto& t : tokens) ids.push_back(t.event.token);
    return ids;
}

Request request_head(const Request& req) {
    Request head;
    head.base() = req.base();
    return head;
}

void respond_json(StreamWriter& writer, const Request& head, http::status status, const ordered_json& body) {
    writer.respond(json_response(head, status, dump_json(body)));
}

Response sse_head(const Request& req) { return stream_head(req, http::status::ok, "text/event-stream"); }

}  // namespace radiance::frontend
