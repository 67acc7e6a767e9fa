// stop_matcher.h: stop strings over streamed text. Text that could still turn out to be the start
// of a stop string is held back until it is resolved, so a stop string is never cut into the
// returned text and never returned itself, however the tokens split it.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace radiance::frontend {

class StopMatcher {
public:
    explicit StopMatcher(std::vector<std::string> stops = {});  // empty strings are ignored

    struct Step {
        std::string text;               // safe to return now
        std::optional<size_t> matched;  // index into stops(): generation must end here
    };
    // Appends generated text. After a match, everything more is swallowed.
    Step push(std::string_view text);
    // Generation ended without a match: what was held back is plain text after all.
    std::string finish();

    const std::vector<std::string>& stops() const { return stops_; }
    bool matched() const { return matched_; }

private:
    std::vector<std::string> stops_;
    std::string held_;
    bool matched_ = false;
};

}  // namespace radiance::frontend
