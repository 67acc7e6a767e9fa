#include "responses_store.h"

namespace radiance::frontend {

void ResponsesStore::put(const std::string& id, StoredResponse r) {
    if (capacity_ == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, fresh] = map_.insert_or_assign(id, std::move(r));
    (void)it;
    if (fresh) order_.push_back(id);
    while (order_.size() > capacity_) {
        map_.erase(order_.front());
        order_.pop_front();
    }
}

std::optional<StoredResponse> ResponsesStore::get(const std::string& id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(id);
    if (it == map_.end()) return std::nullopt;
    return it->second;
}

size_t ResponsesStore::size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.size();
}

}  // namespace radiance::frontend
