#include <catch2/catch.hpp>

#include <random>

#include "stop_matcher.h"

using radiance::frontend::StopMatcher;

namespace {

// Feeds `pieces` and returns every step's text, and the index matched (or -1).
std::pair<std::vector<std::string>, int> feed(StopMatcher& m, const std::vector<std::string>& pieces) {
    std::vector<std::string> out;
    int matched = -1;
    for (const auto& p : pieces) {
        auto step = m.push(p);
        out.push_back(step.text);
        if (step.matched) matched = static_cast<int>(*step.matched);
    }
    if (matched < 0) out.push_back(m.finish());
    return {out, matched};
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += x;
    return s;
}

}  // namespace

TEST_CASE("api stop matcher: a stop string split over pieces is held back, then cut", "[api]") {
    StopMatcher m({"lo wor"});
    auto [out, matched] = feed(m, {"Hel", "lo", " w", "orld"});
    CHECK(matched == 0);
    CHECK(joined(out) == "Hel");
    CHECK(out[0] == "He");               // the final "l" could start "lo wor": held
    CHECK(out[1] == "l");                // "llo" is past that, but "lo" could start it again
    CHECK(m.push("more").text.empty());  // after a match, nothing more
}

TEST_CASE("api stop matcher: a false start is released when it stops matching", "[api]") {
    StopMatcher m({"lo wX"});
    auto [out, matched] = feed(m, {"Hel", "lo", " w", "orld"});
    CHECK(matched == -1);
    CHECK(joined(out) == "Hello world");
    CHECK(out[3] == "lo world");
}

TEST_CASE("api stop matcher: the earliest of several stop strings wins", "[api]") {
    StopMatcher m({"world", "o w", ""});
    CHECK(m.stops().size() == 2);  // empty strings are ignored
    auto [out, matched] = feed(m, {"Hello world"});
    CHECK(matched == 1);
    CHECK(joined(out) == "Hell");
}

TEST_CASE("api stop matcher: held text comes out at the end", "[api]") {
    StopMatcher m({"abc"});
    auto [out, matched] = feed(m, {"xxab"});
    CHECK(matched == -1);
    CHECK(out[0] == "xx");
    CHECK(out[1] == "ab");
}

TEST_CASE("api stop matcher: without stop strings text passes straight through", "[api]") {
    StopMatcher m;
    CHECK(m.push("abc").text == "abc");
    CHECK(m.finish().empty());
}

// The reference: generation stops at the first piece after which the text contains a stop
// string, and the text is cut where the earliest such occurrence starts.
TEST_CASE("api stop matcher: any split of any text gives the reference cut", "[api]") {
    std::mt19937 rng(17);
    const std::string alphabet = "ab c";
    for (int round = 0; round < 3000; ++round) {
        std::string text;
        for (int i = 0, n = static_cast<int>(rng() % 30); i < n; ++i) text += alphabet[rng() % alphabet.size()];
        std::vector<std::string> stops;
        for (int s = 0, n = 1 + static_cast<int>(rng() % 3); s < n; ++s) {
            std::string stop;
            for (int i = 0, k = 1 + static_cast<int>(rng() % 4); i < k; ++i) stop += alphabet[rng() % alphabet.size()];
            stops.push_back(stop);
        }
        std::vector<std::string> pieces;
        for (size_t pos = 0; pos < text.size();) {
            size_t len = 1 + rng() % 5;
            pieces.push_back(text.substr(pos, len));
            pos += len;
        }
        size_t cut = std::string::npos;
        std::string so_far;
        for (const auto& p : pieces) {
            so_far += p;
            for (const auto& s : stops) cut = std::min(cut, so_far.find(s));
            if (cut != std::string::npos) break;
        }
        const std::string expected = text.substr(0, cut);

        StopMatcher m(stops);
        std::string got;
        bool matched = false;
        for (const auto& p : pieces) {
            auto step = m.push(p);
            got += step.text;
            REQUIRE(expected.compare(0, got.size(), got) == 0);  // never anything past the cut
            matched = matched || step.matched.has_value();
        }
        if (!matched) got += m.finish();
        CAPTURE(text, stops);
        CHECK(got == expected);
        CHECK(matched == (cut != std::string::npos));
    }
}
