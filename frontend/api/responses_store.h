// responses_store.h: the Responses API's memory of answered responses, for GET /v1/responses/{id}
// and previous_response_id. Bounded (--responses-store N): past N the oldest is forgotten, and a
// request naming it gets the same 404 as an id never seen. In memory only: a restart forgets all.
#pragma once
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "json_io.h"

namespace radiance::frontend {

struct StoredResponse {
    ordered_json response;  // the response object as answered
    // The conversation so far as Responses input items: the earlier turns, this request's input
    // and its output. Instructions are left out: OpenAI does not carry them over either.
    ordered_json items;
};

class ResponsesStore {
public:
    explicit ResponsesStore(size_t capacity) : capacity_(capacity) {}

    // Keeps `r` under `id`, forgetting the oldest past capacity (nothing is kept at capacity 0).
    void put(const std::string& id, StoredResponse r);
    std::optional<StoredResponse> get(const std::string& id) const;
    size_t capacity() const { return capacity_; }
    size_t size() const;

private:
    // FIFO rather than LRU: a conversation moves on by new ids, so reading an old one is no
    // reason to keep it longer, and eviction order stays predictable.
    size_t capacity_;
    mutable std::mutex mu_;
    std::deque<std::string> order_;  // oldest first
    std::unordered_map<std::string, StoredResponse> map_;
};

}  // namespace radiance::frontend
