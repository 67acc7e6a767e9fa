// wire_output.h: small pieces every wire format writes: Server-Sent Events, ids, timestamps,
// and a deferred JSON answer.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "generation_job.h"
#include "http_server.h"
#include "json_io.h"

namespace radiance::frontend {

// "data: {json}\n\n"
std::string sse_data(const ordered_json& j);
// "event: name\ndata: {json}\n\n" (Anthropic names every event)
std::string sse_event(std::string_view event, const ordered_json& j);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// prefix + 24 random hex digits ("chatcmpl-...", "msg_...").
std::string new_request_id(std::string_view prefix);
int64_t unix_time();

// The ids of generated tokens, as a JSON array.
ordered_json token_ids_json(const std::vector<ShownToken>& tokens);

// The request without its body: enough to build a response for it later.
Request request_head(const Request& req);
// A deferred reply's JSON answer.
void respond_json(StreamWriter& writer, const Request& head, http::status status, const ordered_json& body);
// The stream of a Reply::stream() with SSE headers.
Response sse_head(const Request& req);

}  // namespace radiance::frontend
