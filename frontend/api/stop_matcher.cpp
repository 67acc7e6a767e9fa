#include "stop_matcher.h"

#include <algorithm>

namespace radiance::frontend {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
    for (auto& s : stops)
        if (!s.empty()) stops_.push_back(std::move(s));
}

StopMatcher::Step StopMatcher::push(std::string_view text) {
    Step step;
    if (matched_) return step;
    held_ += text;
    if (stops_.empty()) {
        step.text.swap(held_);
        return step;
    }
    // The earliest occurrence of any stop string wins; nothing before it was a stop string, or
    // it would have been found earlier (only text that cannot start one is ever released).
    size_t best = std::string::npos;
    for (size_t i = 0; i < stops_.size(); ++i) {
        const size_t at = held_.find(stops_[i]);
        if (at < best) best = at, step.matched = i;
    }
    if (step.matched) {
        step.text = held_.substr(0, best);
        held_.clear();
        matched_ = true;
        return step;
    }
    // Keep the longest tail of held_ that is a proper prefix of some stop string.
    size_t keep = 0;
    for (const auto& s : stops_) {
        for (size_t k = std::min(held_.size(), s.size() - 1); k > keep; --k) {
            if (std::string_view(held_).substr(held_.size() - k) == std::string_view(s).substr(0, k)) {
                keep = k;
                break;
            }
        }
    }
    step.text = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return step;
}

std::string StopMatcher::finish() {
    std::string rest;
    if (!matched_) rest.swap(held_);
    return rest;
}

}  // namespace radiance::frontend
